//! `POST /v1/messages/count_tokens` (Anthropic's token counting, which Claude Code calls on every
//! turn, with `?beta=true`): the request's input tokens by the gateway's own estimate
//! (`usage::estimate::prompt_tokens`, the rule an unreported answer is charged by), counted here,
//! never passed through to a provider. It covers `system`, `messages` and `tools`, each image as
//! a fixed upper bound, so it never undercounts what `/v1/messages` will send.

use super::messages_request::invalid;
use crate::api::{ApiError, ChatRequest, ErrorKind};
use crate::usage::estimate::prompt_tokens;
use serde_json::json;

/// A count request, read like a Messages request (`max_tokens` is not needed): the name it
/// asks about, and its estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountRequest {
    pub model: String,
    pub input_tokens: u64,
    /// Tools declared, and an image part in the messages: what routing rules' conditions may
    /// read, so the name resolves as `/v1/messages` would resolve it.
    pub tools: bool,
    pub has_images: bool,
    /// The `tools` as sent, kept for `params.task` (`surfaces::task`), which scans them only
    /// when a condition reads the task and the client is no coding agent.
    pub tools_json: Option<String>,
}

impl CountRequest {
    pub fn parse(
        body: Vec<u8>,
        max_values: usize,
        default_model: Option<&str>,
    ) -> Result<Self, ApiError> {
        let raw = ChatRequest::parse_with_default(body, max_values, default_model)?;
        match raw.raw("messages") {
            Some(m) if m.trim_start().starts_with('[') => {}
            Some(_) => return Err(invalid("messages", "an array of messages")),
            None => {
                return Err(
                    ApiError::new(ErrorKind::InvalidRequest, "'messages' is required.")
                        .with_param("messages"),
                )
            }
        }
        Ok(Self {
            input_tokens: prompt_tokens(&raw),
            tools: super::facts::declares_tools(&raw),
            tools_json: raw.raw("tools").map(str::to_owned),
            has_images: raw.raw("messages").is_some_and(|m| m.contains("\"image\"")),
            model: raw.model,
        })
    }

    /// Anthropic's answer: `{"input_tokens": N}`.
    pub fn answer(&self) -> Vec<u8> {
        json!({"input_tokens": self.input_tokens})
            .to_string()
            .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn count(body: Value) -> u64 {
        CountRequest::parse(body.to_string().into_bytes(), 10_000, None)
            .unwrap()
            .input_tokens
    }

    #[test]
    fn the_count_grows_with_the_system_prompt_the_tools_and_the_messages() {
        let base = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        let mut system = base.clone();
        system["system"] = json!("You are a careful assistant. ".repeat(20));
        let mut tools = system.clone();
        tools["tools"] = json!([{"name": "get_weather", "description": "Weather for a city.",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]);
        let mut messages = tools.clone();
        messages["messages"] = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Hello! How can I help?"},
            {"role": "user", "content": "Weather in Oslo?"},
        ]);
        let counts = [base, system, tools, messages].map(count);
        assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    }

    #[test]
    fn the_count_is_the_estimate_charged_for_the_same_messages_request() {
        let body = json!({"model": "m", "max_tokens": 5, "system": "s", "messages": [{"role": "user", "content": "hi"}]});
        let raw = ChatRequest::parse_bounded(body.to_string().into_bytes(), 1_000).unwrap();
        assert_eq!(count(body), prompt_tokens(&raw));
    }

    #[test]
    fn a_count_request_needs_a_model_and_messages_but_not_max_tokens() {
        let r = CountRequest::parse(br#"{"messages":[]}"#.to_vec(), 100, None);
        assert_eq!(r.unwrap_err().status(), 400);
        let r = CountRequest::parse(br#"{"model":"m"}"#.to_vec(), 100, None);
        assert_eq!(r.unwrap_err().param(), Some("messages"));
        let r = CountRequest::parse(br#"{"messages":[]}"#.to_vec(), 100, Some("fast")).unwrap();
        assert_eq!(r.model, "fast");
        assert_eq!(
            serde_json::from_slice::<Value>(&r.answer()).unwrap(),
            json!({"input_tokens": 1})
        );
    }
}
