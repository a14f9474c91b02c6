//! The gateway's own token estimate, one rule for every place that needs a count before (or
//! without) the upstream's: the context-window guard, the charge for an answer whose usage never
//! came, the admission reservation, and `/v1/messages/count_tokens`.
//!
//! The rule, documented in the README: tokens = ceil(bytes of the prompt's JSON text / 4). Four
//! bytes a token is the usual rule of thumb for English text under the GPT and Claude tokenizers;
//! JSON punctuation makes it err on the large side. No tokenizer is shipped: it would not fit the
//! Worker's size budget, and no one tokenizer is right for every provider in a chain.

use crate::api::ChatRequest;

/// The documented estimate: ceil(message bytes / 4) + requested output tokens.
pub fn estimate_tokens(messages_bytes: usize, output_tokens: u64) -> u64 {
    u64::try_from(messages_bytes.div_ceil(4))
        .unwrap_or(u64::MAX)
        .saturating_add(output_tokens)
}

/// The output the caller asked for: `max_completion_tokens`, else `max_tokens`, else 0.
pub fn requested_output(req: &ChatRequest) -> u64 {
    ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|f| req.raw(f).and_then(|raw| raw.parse::<u64>().ok()))
        .unwrap_or(0)
}
