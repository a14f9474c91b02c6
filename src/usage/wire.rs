//! `usage` as the upstream families write it, read without building a tree of the answer.
//!
//! One struct takes both shapes: OpenAI-compatible chat and embeddings (`prompt_tokens`,
//! `completion_tokens`, `prompt_tokens_details.cached_tokens`) and Anthropic's Messages
//! (`input_tokens`, `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`).
//!
//! Anthropic's `input_tokens` counts only the input after the last cache breakpoint: reads from
//! and writes to the prompt cache are reported beside it. So `prompt` = input + cache reads +
//! cache writes (the whole prompt, as OpenAI counts it) and `cached` = cache reads. Cache writes
//! are charged at the input price (the catalog has no separate write price).

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
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct PromptDetails {
    pub cached_tokens: Option<u64>,
}

impl WireUsage {
    /// The counts, or `None` when the object names no tokens at all (unknown, never zero).
    pub fn counts(&self) -> Option<TokenCounts> {
        if self.input_tokens.is_some() || self.output_tokens.is_some() {
            let read = self.cache_read_input_tokens.unwrap_or(0);
            let prompt = self
                .input_tokens
                .unwrap_or(0)
                .saturating_add(read)
                .saturating_add(self.cache_creation_input_tokens.unwrap_or(0));
            return Some(TokenCounts {
                prompt,
                completion: self.output_tokens.unwrap_or(0),
                cached: read,
            });
        }
        let prompt = self.prompt_tokens?;
        let cached = self
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        Some(TokenCounts {
            prompt,
            // Embeddings have no completion.
            completion: self.completion_tokens.unwrap_or(0),
            cached: cached.min(prompt),
        })
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
mod tests {
    use super::*;

    fn counts(json: &str) -> Option<TokenCounts> {
        answer_usage(json.as_bytes()).unwrap()
    }

    fn t(prompt: u64, completion: u64, cached: u64) -> Option<TokenCounts> {
        Some(TokenCounts::new(prompt, completion, cached))
    }

    #[test]
    fn openai_chat_usage_reads_prompt_completion_and_cached_tokens() {
        assert_eq!(
            counts(
                r#"{"id":"c","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":120,"completion_tokens":8,"total_tokens":128,"prompt_tokens_details":{"cached_tokens":100}}}"#
            ),
            t(120, 8, 100)
        );
        assert_eq!(
            counts(r#"{"usage":{"prompt_tokens":5,"completion_tokens":7}}"#),
            t(5, 7, 0)
        );
    }

    #[test]
    fn embeddings_usage_has_prompt_tokens_and_no_completion() {
        assert_eq!(
            counts(
                r#"{"data":[{"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":3,"total_tokens":3}}"#
            ),
            t(3, 0, 0)
        );
    }

    #[test]
    fn anthropic_prompt_is_input_plus_cache_reads_plus_cache_writes_and_cached_is_cache_reads() {
        assert_eq!(
            counts(
                r#"{"type":"message","usage":{"input_tokens":12,"cache_read_input_tokens":100,"cache_creation_input_tokens":30,"output_tokens":58}}"#
            ),
            t(142, 58, 100)
        );
    }

    #[test]
    fn an_answer_without_usage_or_with_an_empty_one_has_unknown_tokens_never_zero() {
        assert_eq!(counts(r#"{"choices":[]}"#), None);
        assert_eq!(counts(r#"{"usage":null}"#), None);
        assert_eq!(counts(r#"{"usage":{}}"#), None);
    }

    #[test]
    fn cached_tokens_never_exceed_the_prompt() {
        assert_eq!(
            counts(r#"{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":9}}}"#),
            t(5, 0, 5)
        );
    }

    #[test]
    fn a_usage_object_of_an_unexpected_shape_makes_tokens_unknown_not_the_answer_broken() {
        assert_eq!(
            counts(r#"{"usage":{"prompt_tokens":"five"},"choices":[{}]}"#),
            None
        );
        assert_eq!(counts(r#"{"usage":[1,2]}"#), None);
        assert_eq!(counts("[1]"), None);
    }

    #[test]
    fn a_body_that_is_not_json_is_refused_while_reading_usage() {
        assert!(answer_usage(b"<html>").is_err());
        assert!(answer_usage(br#"{"usage":{"prompt_tokens":1}"#).is_err());
    }

    #[test]
    fn a_later_report_replaces_only_the_fields_it_carries() {
        let mut a: WireUsage = serde_json::from_str(
            r#"{"input_tokens":5,"cache_read_input_tokens":2,"output_tokens":1}"#,
        )
        .unwrap();
        a.merge(&serde_json::from_str(r#"{"output_tokens":7}"#).unwrap());
        assert_eq!(a.counts(), t(7, 7, 2));
    }
}
