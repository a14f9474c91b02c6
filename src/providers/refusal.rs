//! Whether an upstream's non-streamed answer is a safety refusal, read from
//! the answer as its own family wrote it, before any translation into the caller's surface.
//!
//! - OpenAI-compatible: every choice ends with `finish_reason: "content_filter"` and has no
//!   content: `message.content` absent, `null`, `""` or `[]`, and no `tool_calls` (nor a legacy
//!   `function_call`). A filtered answer that still carries text or a tool call is an answer.
//! - Anthropic Messages: `stop_reason: "refusal"`, whatever content came before it.
//!
//! Only the members that decide are read: serde skips everything else of the answer (as
//! `IgnoredAny`), so no tree of the body is built, and only when the requested name has
//! `on_refusal: fallback`.

use super::Dialect;
use crate::config::ProviderKind;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Whether `bytes`, a whole 2xx answer of a `kind` upstream, is a safety refusal. A body that is
/// not of the family's shape is no refusal (the shape check is the answer reader's).
pub fn is_refusal(dialect: Dialect, bytes: &[u8]) -> bool {
    match dialect {
        Dialect::Openai => openai_refusal(bytes),
        Dialect::Anthropic => anthropic_refusal(bytes),
        Dialect::Gemini => super::gemini::response::is_refusal(bytes),
        Dialect::Bedrock => super::bedrock::response::is_refusal(bytes),
    }
}

/// Whether an error answer of a `kind` upstream is a safety refusal: Azure OpenAI's content
/// filter refuses a prompt with a 400 whose `error.code` is `content_filter`.
pub fn is_status_refusal(kind: ProviderKind, status: u16, text: &str) -> bool {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        error: Option<Code<'a>>,
    }
    #[derive(Deserialize)]
    struct Code<'a> {
        #[serde(borrow)]
        code: Option<Cow<'a, str>>,
    }
    kind == ProviderKind::AzureOpenai
        && status == 400
        && serde_json::from_str::<Envelope<'_>>(text)
            .ok()
            .and_then(|e| e.error?.code)
            .is_some_and(|c| c == "content_filter")
}

#[derive(Deserialize)]
struct Chat<'a> {
    #[serde(borrow)]
    choices: Option<Vec<Choice<'a>>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_calls: Option<&'a RawValue>,
    #[serde(borrow)]
    function_call: Option<&'a RawValue>,
}

/// `null`, `""` and `[]` say nothing; anything else is content.
fn empty(raw: Option<&RawValue>) -> bool {
    raw.is_none_or(|r| matches!(r.get().trim(), "null" | "\"\"" | "[]"))
}

fn openai_refusal(bytes: &[u8]) -> bool {
    let Ok(Chat {
        choices: Some(choices),
    }) = serde_json::from_slice::<Chat<'_>>(bytes)
    else {
        return false;
    };
    !choices.is_empty()
        && choices.iter().all(|c| {
            c.finish_reason.as_deref() == Some("content_filter")
                && c.message.as_ref().is_none_or(|m| {
                    empty(m.content) && empty(m.tool_calls) && empty(m.function_call)
                })
        })
}

#[derive(Deserialize)]
struct Messages<'a> {
    #[serde(borrow)]
    stop_reason: Option<Cow<'a, str>>,
}

fn anthropic_refusal(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Messages<'_>>(bytes)
        .is_ok_and(|m| m.stop_reason.as_deref() == Some("refusal"))
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_azure_content_filter_400_is_a_refusal_and_no_other_400_is() {
        let filtered = r#"{"error":{"code":"content_filter","message":"The response was filtered","param":"prompt","status":400}}"#;
        assert!(is_status_refusal(ProviderKind::AzureOpenai, 400, filtered));
        assert!(!is_status_refusal(ProviderKind::Openai, 400, filtered));
        assert!(!is_status_refusal(ProviderKind::AzureOpenai, 429, filtered));
        let other = r#"{"error":{"code":"invalid_value","message":"bad"}}"#;
        assert!(!is_status_refusal(ProviderKind::AzureOpenai, 400, other));
        assert!(!is_status_refusal(
            ProviderKind::AzureOpenai,
            400,
            "not json"
        ));
    }

    use super::*;
    use serde_json::json;

    fn openai(v: serde_json::Value) -> bool {
        is_refusal(Dialect::Openai, v.to_string().as_bytes())
    }

    fn filtered(message: serde_json::Value) -> serde_json::Value {
        json!({"id": "c", "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "content_filter"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 0}})
    }

    #[test]
    fn an_openai_content_filter_finish_with_no_content_is_a_refusal() {
        assert!(openai(filtered(
            json!({"role": "assistant", "content": null})
        )));
        assert!(openai(filtered(
            json!({"role": "assistant", "content": ""})
        )));
        assert!(openai(filtered(json!({"role": "assistant"}))));
        assert!(openai(filtered(
            json!({"role": "assistant", "content": null, "tool_calls": []})
        )));
        // OpenAI's own `refusal` text does not count as content.
        assert!(openai(filtered(
            json!({"role": "assistant", "content": null, "refusal": "I can't help with that."})
        )));
    }

    #[test]
    fn a_content_filter_finish_that_still_carries_content_or_a_tool_call_is_an_answer() {
        assert!(!openai(filtered(
            json!({"role": "assistant", "content": "partial"})
        )));
        let call =
            json!([{"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}]);
        assert!(!openai(filtered(
            json!({"role": "assistant", "content": null, "tool_calls": call})
        )));
    }

    #[test]
    fn other_finish_reasons_and_other_shapes_are_no_refusal() {
        let stop = json!({"choices": [{"message": {"content": null}, "finish_reason": "stop"}]});
        assert!(!openai(stop));
        assert!(!openai(json!({"choices": []})));
        assert!(!openai(json!({"data": [{"embedding": [0.1]}]})));
        assert!(!is_refusal(Dialect::Openai, b"not json"));
        assert!(!is_refusal(Dialect::Openai, b"[1,2]"));
    }

    #[test]
    fn with_several_choices_it_is_a_refusal_only_when_every_choice_is_one() {
        let two = |second: serde_json::Value| {
            json!({"choices": [
                {"index": 0, "message": {"content": null}, "finish_reason": "content_filter"},
                {"index": 1, "message": second, "finish_reason": "content_filter"}]})
        };
        assert!(openai(two(json!({"content": null}))));
        assert!(!openai(two(json!({"content": "ok"}))));
    }

    #[test]
    fn an_anthropic_refusal_stop_reason_is_a_refusal_whatever_the_content() {
        let m = |stop: &str, content: serde_json::Value| {
            let body = json!({"id": "msg", "type": "message", "role": "assistant", "model": "c",
                "content": content, "stop_reason": stop, "stop_sequence": null,
                "usage": {"input_tokens": 5, "output_tokens": 1}});
            is_refusal(Dialect::Anthropic, body.to_string().as_bytes())
        };
        assert!(m("refusal", json!([])));
        assert!(m("refusal", json!([{"type": "text", "text": "I"}])));
        assert!(!m("end_turn", json!([])));
        assert!(!m("max_tokens", json!([])));
        assert!(!is_refusal(Dialect::Anthropic, b"{}"));
        assert!(!is_refusal(Dialect::Anthropic, b"oops"));
    }

    #[test]
    fn a_refusal_written_with_escapes_is_still_read() {
        let body =
            br#"{"choices":[{"message":{"content":null},"finish_reason":"content\u005ffilter"}]}"#;
        assert!(is_refusal(Dialect::Openai, body));
    }
}
