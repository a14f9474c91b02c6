//! `usage` as the upstream families write it, read without building a tree of the answer.
//!
//! One struct takes both shapes: OpenAI-compatible chat and embeddings (`prompt_tokens`,
//! `completion_tokens`, `prompt_tokens_details.cached_tokens`) and Anthropic's Messages
//! (`input_tokens`, `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`
//! and its TTL breakdown `cache_creation`).
//!
//! Anthropic's `input_tokens` counts only the input after the last cache breakpoint: reads from
//! and writes to the prompt cache are reported beside it. So `prompt` = input + cache reads +
//! cache writes (the whole prompt, as OpenAI counts it), `cached` = cache reads, and the writes
//! are split by TTL (`write_split`). A chat-shaped usage carries the writes under the same
//! names: the gateway's translation of an Anthropic or Bedrock answer writes them there
//! (`providers::anthropic::response::usage`), so a chat caller's answer is charged for its
//! writes as a Messages caller's is.

use super::TokenCounts;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct WireUsage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub prompt_tokens_details: Option<PromptDetails>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
    pub cache_creation: Option<CacheCreation>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct PromptDetails {
    pub cached_tokens: Option<u64>,
}

/// Anthropic's breakdown of `cache_creation_input_tokens` by the TTL of the write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct CacheCreation {
    pub ephemeral_5m_input_tokens: Option<u64>,
    pub ephemeral_1h_input_tokens: Option<u64>,
}

/// The cache writes as (5-minute, 1-hour), from a reported total and a TTL breakdown (either may
/// be missing). The total is the larger of the two reports; whatever the breakdown does not
/// put in the 1-hour tier is a 5-minute write, as a write without a breakdown is.
pub fn write_split(total: Option<u64>, five_minutes: u64, one_hour: u64) -> (u64, u64) {
    let total = total
        .unwrap_or(0)
        .max(five_minutes.saturating_add(one_hour));
    let one_hour = one_hour.min(total);
    (total - one_hour, one_hour)
}

impl WireUsage {
    /// The cache writes as (5-minute, 1-hour).
    fn writes(&self) -> (u64, u64) {
        let b = self.cache_creation.unwrap_or_default();
        write_split(
            self.cache_creation_input_tokens,
            b.ephemeral_5m_input_tokens.unwrap_or(0),
            b.ephemeral_1h_input_tokens.unwrap_or(0),
        )
    }

    /// The counts, or `None` when the object names no tokens at all (unknown, never zero).
    pub fn counts(&self) -> Option<TokenCounts> {
        let (w5, w1h) = self.writes();
        if self.input_tokens.is_some() || self.output_tokens.is_some() {
            let read = self.cache_read_input_tokens.unwrap_or(0);
            let prompt = self
                .input_tokens
                .unwrap_or(0)
                .saturating_add(read)
                .saturating_add(w5)
                .saturating_add(w1h);
            return Some(
                TokenCounts::new(prompt, self.output_tokens.unwrap_or(0), read)
                    .with_writes(w5, w1h),
            );
        }
        let prompt = self.prompt_tokens?;
        let cached = self
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0)
            .min(prompt);
        // `prompt_tokens` already counts the writes: they are parts of it, never beyond it.
        let w1h = w1h.min(prompt - cached);
        let w5 = w5.min(prompt - cached - w1h);
        // Embeddings have no completion.
        let completion = self.completion_tokens.unwrap_or(0);
        Some(TokenCounts::new(prompt, completion, cached).with_writes(w5, w1h))
    }

    /// Fields a later report carries replace the earlier ones (Anthropic's `message_delta`
    /// brings the final `output_tokens` after `message_start` gave the input).
    pub fn merge(&mut self, later: &WireUsage) {
        let take = |a: &mut Option<u64>, b: Option<u64>| {
            if b.is_some() {
                *a = b;
            }
        };
        take(&mut self.prompt_tokens, later.prompt_tokens);
        take(&mut self.completion_tokens, later.completion_tokens);
        take(&mut self.input_tokens, later.input_tokens);
        take(&mut self.output_tokens, later.output_tokens);
        take(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
        take(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
        if later.prompt_tokens_details.is_some() {
            self.prompt_tokens_details = later.prompt_tokens_details;
        }
        if later.cache_creation.is_some() {
            self.cache_creation = later.cache_creation;
        }
    }
}

/// An answer's top level with only `usage` kept: every other member is skipped by serde (as
/// `IgnoredAny`), so a large answer is scanned once and nothing of it is copied. `usage` is kept
/// as raw text and read on its own, so a usage object of an unexpected shape makes the tokens
/// unknown, never the answer unusable.
#[derive(Deserialize)]
struct UsageOnly<'a> {
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
}

/// The usage of a whole JSON answer of either family, checking on the way that the body is JSON.
/// `Ok(None)`: valid JSON without (readable) usage.
pub fn answer_usage(bytes: &[u8]) -> Result<Option<TokenCounts>, String> {
    let answer: UsageOnly<'_> = serde_json::from_slice(bytes)
        .or_else(|_| {
            // Valid JSON that is not an object (the family's shape check refuses it later).
            serde_json::from_slice::<IgnoredAny>(bytes).map(|_| UsageOnly { usage: None })
        })
        .map_err(|_| "body is not valid JSON".to_owned())?;
    Ok(answer.usage.and_then(usage_counts))
}

/// One `usage` object's counts; `None` when it is not one this reads.
pub fn usage_counts(raw: &RawValue) -> Option<TokenCounts> {
    serde_json::from_str::<WireUsage>(raw.get()).ok()?.counts()
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
