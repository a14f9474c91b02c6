//! Anthropic's Messages API behind OpenAI's chat-completions shape: the caller never learns which
//! family answered, except from the `X-CogniGate-*` headers.

pub mod native;
pub mod request;
pub mod response;
pub mod stream;

pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when neither the request nor the model sets one (Anthropic requires it).
pub const DEFAULT_MAX_TOKENS: u64 = 4_096;

/// `stop_reason` → `finish_reason`.
pub fn finish_reason(stop_reason: &str) -> &'static str {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "refusal" => "content_filter",
        // end_turn, stop_sequence, pause_turn
        _ => "stop",
    }
}
