use super::*;
use crate::api::ChatRequest;
use crate::config::admin_body::{parse_body, ModelBody};
use crate::config::{CatalogModel, ModelId};

fn chat(answer: Value) -> (Value, Option<TokenCounts>) {
    let (bytes, tokens) = read(answer.to_string().as_bytes(), 1_700_000_000).unwrap();
    (serde_json::from_slice(&bytes).unwrap(), tokens)
}

fn answer(parts: Value, finish: &str) -> Value {
    json!({
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "abc123",
    })
}

#[test]
fn text_parts_are_joined_into_one_completion() {
    let (c, tokens) = chat(answer(json!([{"text": "Hel"}, {"text": "lo"}]), "STOP"));
    assert_eq!(
        c,
        json!({"id": "chatcmpl-abc123", "object": "chat.completion", "created": 1_700_000_000,
            "model": "gemini-2.5-flash",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"},
                "finish_reason": "stop", "logprobs": null}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    );
    assert_eq!(tokens, Some(TokenCounts::new(10, 5, 0)));
}

#[test]
fn thought_parts_are_reasoning_content() {
    let (c, _) = chat(answer(
        json!([{"text": "Let me think.", "thought": true}, {"text": "42", "thoughtSignature": "c2ln"}]),
        "STOP",
    ));
    assert_eq!(c["choices"][0]["message"]["content"], "42");
    assert_eq!(
        c["choices"][0]["message"]["reasoning_content"],
        "Let me think."
    );
    assert!(c["choices"][0]["message"].get("thinking_blocks").is_none());
}

#[test]
fn function_calls_are_tool_calls_with_their_signature_in_the_id() {
    let (c, _) = chat(answer(
        json!([
            {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2ln+/8="},
            {"functionCall": {"name": "time", "id": "own-id"}},
        ]),
        "STOP",
    ));
    let message = &c["choices"][0]["message"];
    assert_eq!(message["content"], Value::Null);
    assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
    let calls = message["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["id"], "call_0-abc123_ts_c2ln-_8");
    assert_eq!(
        calls[0]["function"],
        json!({"name": "weather", "arguments": "{\"city\":\"Paris\"}"})
    );
    assert_eq!(calls[1]["id"], "own-id");
    assert_eq!(calls[1]["function"]["arguments"], "{}");
}

#[test]
fn finish_reasons_map_to_openai_ones() {
    for (reason, finish) in [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("IMAGE_SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("SPII", "content_filter"),
        ("OTHER", "stop"),
    ] {
        let (c, _) = chat(answer(json!([{"text": "x"}]), reason));
        assert_eq!(c["choices"][0]["finish_reason"], finish, "{reason}");
    }
}

#[test]
fn a_blocked_prompt_is_a_content_filter_answer_with_empty_content() {
    let blocked = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}, "modelVersion": "g"});
    let (c, tokens) = chat(blocked.clone());
    assert_eq!(c["choices"][0]["finish_reason"], "content_filter");
    assert_eq!(c["choices"][0]["message"]["content"], "");
    assert_eq!(tokens, Some(TokenCounts::new(12, 0, 0)));
    assert!(is_refusal(blocked.to_string().as_bytes()));
    // As the gateway's own refusal check reads the translated answer.
    let (bytes, _) = read(blocked.to_string().as_bytes(), 0).unwrap();
    assert!(crate::providers::refusal::is_refusal(
        crate::providers::Dialect::Openai,
        &bytes
    ));
}

#[test]
fn filter_finishes_and_blocked_prompts_are_refusals_and_nothing_else_is() {
    // The filter finishes Google documents, as one line so the list reads as the spec's.
    let filters = "SAFETY IMAGE_SAFETY RECITATION PROHIBITED_CONTENT BLOCKLIST SPII";
    for r in filters.split(' ') {
        let a = json!({"candidates": [{"finishReason": r}]});
        assert!(is_refusal(a.to_string().as_bytes()), "{r}");
    }
    for r in ["STOP", "MAX_TOKENS", "OTHER", "MALFORMED_FUNCTION_CALL"] {
        let a = answer(json!([{"text": "x"}]), r);
        assert!(!is_refusal(a.to_string().as_bytes()), "{r}");
    }
    assert!(!is_refusal(br#"{"promptFeedback": {"safetyRatings": []}}"#));
    assert!(!is_refusal(b"not json"));
    assert!(!is_refusal(b"[]"));
}

#[test]
fn usage_counts_thoughts_as_completion_and_cached_content_as_cached_prompt() {
    let meta = json!({"promptTokenCount": 100, "cachedContentTokenCount": 60,
        "candidatesTokenCount": 7, "thoughtsTokenCount": 30, "toolUsePromptTokenCount": 4});
    let (u, tokens) = usage(&meta);
    assert_eq!(
        u,
        json!({"prompt_tokens": 104, "completion_tokens": 37, "total_tokens": 141,
            "prompt_tokens_details": {"cached_tokens": 60},
            "completion_tokens_details": {"reasoning_tokens": 30}})
    );
    assert_eq!(tokens, Some(TokenCounts::new(104, 37, 60)));
    // Read back the way the gateway meters a translated answer.
    let wire = crate::usage::answer_usage(json!({ "usage": u }).to_string().as_bytes()).unwrap();
    assert_eq!(wire, tokens);
}

#[test]
fn an_answer_without_usage_has_unknown_tokens_and_no_usage() {
    let mut a = answer(json!([{"text": "x"}]), "STOP");
    a.as_object_mut().unwrap().remove("usageMetadata");
    a.as_object_mut().unwrap().remove("responseId");
    let (c, tokens) = chat(a);
    assert_eq!(tokens, None);
    assert!(c.get("usage").is_none());
    assert_eq!(c["id"], "chatcmpl-gemini-1700000000");
}

#[test]
fn parts_of_unexpected_shapes_are_skipped_without_failing() {
    let odd = json!({"candidates": [{"content": {"parts": [5, {"functionCall": 3}, {"text": 7},
        {"functionCall": {"name": 1, "args": [1]}}, {"inlineData": {}}]}, "finishReason": 4}],
        "usageMetadata": {"promptTokenCount": "x"}});
    let (c, tokens) = chat(odd);
    assert_eq!(tokens, None);
    let calls = c["choices"][0]["message"]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["function"], json!({"name": "", "arguments": "{}"}));
}

#[test]
fn a_body_of_another_shape_is_refused() {
    assert!(read(b"<html>", 0).is_err());
    assert!(read(br#"{"error": {"code": 500}}"#, 0).is_err());
    assert!(read(b"[]", 0).is_err());
}

fn model() -> CatalogModel {
    let m: ModelBody =
        parse_body(br#"{"provider":"p","upstream_model":"gemini-3-pro","context_window":8000}"#)
            .unwrap();
    m.validate(ModelId::parse("m").unwrap()).unwrap()
}

#[test]
fn a_tool_call_round_trip_gives_back_the_signature_and_names_the_result() {
    let signature = "CiQBjz1rX8+4/ab3qZ0mNw==";
    let (c, _) = chat(answer(
        json!([{"functionCall": {"name": "weather", "args": {"city": "Oslo"}}, "thoughtSignature": signature}]),
        "STOP",
    ));
    let assistant = c["choices"][0]["message"].clone();
    let id = assistant["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
    let history = json!({"model": "m", "messages": [
        {"role": "user", "content": "Weather in Oslo?"},
        assistant,
        {"role": "tool", "tool_call_id": id, "content": "{\"temp\": -3}"},
    ]});
    let req = ChatRequest::parse(history.to_string().as_bytes()).unwrap();
    let b: Value =
        serde_json::from_slice(&crate::providers::gemini::request::body(&model(), &req)).unwrap();
    assert_eq!(
        b["contents"][1],
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}, "thoughtSignature": signature}]})
    );
    assert_eq!(
        b["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "weather", "response": {"temp": -3}}}]})
    );
}
