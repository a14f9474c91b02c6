//! Usage read from a stream as it passes, one event at a time, on the upstream side (before any
//! surface translation), so every surface is metered the same way.
//!
//! Chat-shaped streams (OpenAI-compatible upstreams, and Anthropic streams once translated) end
//! with a usage chunk (`choices: []` plus `usage`) because the gateway always asks for one; it is
//! stripped here when the caller did not ask. A native Messages stream carries usage in
//! `message_start` (input and cache tokens) and `message_delta` (output tokens).

use super::wire::WireUsage;
use super::TokenCounts;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `chat.completion.chunk` events; `strip`: the caller did not ask for the usage chunk.
    Chat { strip: bool },
    /// Anthropic Messages events, passed to the caller as sent.
    Messages,
}

#[derive(Debug, Clone)]
pub struct StreamUsage {
    shape: Shape,
    seen: Option<WireUsage>,
}

impl Default for StreamUsage {
    /// A chat stream whose usage chunk (if any) goes to the caller.
    fn default() -> Self {
        Self::chat(false)
    }
}

#[derive(Deserialize)]
struct ChatChunk<'a> {
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    choices: Option<Vec<IgnoredAny>>,
}

#[derive(Deserialize)]
struct MessagesEvent<'a> {
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<MessageStart<'a>>,
}

#[derive(Deserialize)]
struct MessageStart<'a> {
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
}

fn wire(raw: Option<&RawValue>) -> Option<WireUsage> {
    serde_json::from_str(raw?.get()).ok()
}

impl StreamUsage {
    pub fn chat(strip_usage_chunk: bool) -> Self {
        Self {
            shape: Shape::Chat {
                strip: strip_usage_chunk,
            },
            seen: None,
        }
    }

    pub fn messages() -> Self {
        Self {
            shape: Shape::Messages,
            seen: None,
        }
    }

    /// Reads one data event's payload; whether the event goes on to the caller.
    pub fn observe(&mut self, data: &str) -> bool {
        // Most events name no usage; they are not parsed at all.
        if !data.contains("\"usage\"") {
            return true;
        }
        match self.shape {
            Shape::Chat { strip } => {
                let Ok(chunk) = serde_json::from_str::<ChatChunk<'_>>(data) else {
                    return true;
                };
                // OpenAI sends `"usage": null` on every chunk but the last.
                let Some(usage) = wire(chunk.usage) else {
                    return true;
                };
                self.record(&usage);
                let usage_only = chunk.choices.is_none_or(|c| c.is_empty());
                !(strip && usage_only)
            }
            Shape::Messages => {
                if let Ok(event) = serde_json::from_str::<MessagesEvent<'_>>(data) {
                    let start = event.message.and_then(|m| wire(m.usage));
                    for usage in [start, wire(event.usage)].iter().flatten() {
                        self.record(usage);
                    }
                }
                true
            }
        }
    }

    fn record(&mut self, usage: &WireUsage) {
        match (&mut self.seen, self.shape) {
            (Some(seen), Shape::Messages) => seen.merge(usage),
            // A chat stream's usage chunk is the whole count; a later one replaces it.
            (seen, _) => *seen = Some(*usage),
        }
    }

    /// The tokens reported so far; `None` when the upstream reported none (unknown).
    pub fn tokens(&self) -> Option<TokenCounts> {
        self.seen.as_ref().and_then(WireUsage::counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTENT: &str =
        r#"{"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}"#;
    const USAGE: &str = r#"{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":2}}}"#;

    fn t(prompt: u64, completion: u64, cached: u64) -> Option<TokenCounts> {
        Some(TokenCounts::new(prompt, completion, cached))
    }

    #[test]
    fn the_usage_chunk_is_stripped_when_the_caller_did_not_ask_and_its_tokens_are_kept() {
        let mut u = StreamUsage::chat(true);
        assert!(u.observe(CONTENT), "content chunks always pass");
        assert!(!u.observe(USAGE), "the usage chunk is stripped");
        assert_eq!(u.tokens(), t(5, 7, 2));
    }

    #[test]
    fn the_usage_chunk_is_passed_when_the_caller_asked_for_it() {
        let mut u = StreamUsage::chat(false);
        assert!(u.observe(CONTENT));
        assert!(u.observe(USAGE));
        assert_eq!(u.tokens(), t(5, 7, 2));
    }

    #[test]
    fn usage_on_a_chunk_with_choices_is_counted_but_never_stripped() {
        let mut u = StreamUsage::chat(true);
        let both = r#"{"choices":[{"index":0,"delta":{}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#;
        assert!(u.observe(both));
        assert_eq!(u.tokens(), t(1, 2, 0));
    }

    #[test]
    fn a_stream_that_reports_no_usage_has_unknown_tokens() {
        let mut u = StreamUsage::chat(true);
        assert!(u.observe(CONTENT));
        assert!(u.observe(r#"{"choices":[],"usage":null}"#));
        assert_eq!(u.tokens(), None);
    }

    #[test]
    fn a_native_messages_stream_counts_input_and_cache_reads_from_start_and_output_from_delta() {
        let mut u = StreamUsage::messages();
        let start = r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}"#;
        let delta = r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#;
        assert!(u.observe(start));
        assert!(u.observe(r#"{"type":"content_block_delta","delta":{"text":"\"usage\""}}"#));
        assert!(u.observe(delta), "native events always pass");
        assert_eq!(u.tokens(), t(105, 7, 100));
    }
}
