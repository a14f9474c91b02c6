use super::*;
use crate::providers::bedrock::errors::{error_class, ErrorClass};
use crate::providers::bedrock::test_frames::{event, exception, frame};

/// The data payloads of SSE bytes, in order (`[DONE]` included).
fn events(bytes: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(bytes).unwrap();
    assert!(text.is_empty() || text.ends_with("\n\n"), "{text}");
    text.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| e.strip_prefix("data: ").unwrap().to_owned())
        .collect()
}

fn json_of(e: &str) -> Value {
    serde_json::from_str(e).unwrap()
}

fn text_answer() -> Vec<u8> {
    let mut s = event("messageStart", json!({"role": "assistant"}));
    s.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "Hel"}}),
    ));
    s.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "lo"}}),
    ));
    s.extend(event("contentBlockStop", json!({"contentBlockIndex": 0})));
    s.extend(event("messageStop", json!({"stopReason": "end_turn"})));
    s.extend(event(
        "metadata",
        json!({"usage": {"inputTokens": 7, "outputTokens": 2, "totalTokens": 19,
            "cacheReadInputTokens": 10}, "metrics": {"latencyMs": 300}}),
    ));
    s
}

fn tool_answer() -> Vec<u8> {
    let mut s = event("messageStart", json!({"role": "assistant"}));
    s.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "think"}}}),
    ));
    s.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}}),
    ));
    s.extend(event(
        "contentBlockStart",
        json!({"contentBlockIndex": 1,
        "start": {"toolUse": {"toolUseId": "tooluse_a", "name": "get_weather"}}}),
    ));
    s.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"city\":"}}}),
    ));
    s.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": "\"Paris\"}"}}}),
    ));
    s.extend(event("contentBlockStop", json!({"contentBlockIndex": 1})));
    s.extend(event("messageStop", json!({"stopReason": "tool_use"})));
    s.extend(event(
        "metadata",
        json!({"usage": {"inputTokens": 3, "outputTokens": 4}}),
    ));
    s
}

fn translate(bytes: &[u8]) -> Vec<String> {
    let mut t = Translator::new("req-1".into(), "claude".into());
    let mut out = t.push(bytes);
    out.extend(t.end());
    events(&out)
}

#[test]
fn a_text_answer_becomes_role_content_finish_usage_and_done() {
    let e = translate(&text_answer());
    assert_eq!(e.len(), 6, "{e:?}");
    let deltas: Vec<Value> = e[..4]
        .iter()
        .map(|c| json_of(c)["choices"][0]["delta"].clone())
        .collect();
    assert_eq!(
        deltas,
        [
            json!({"role": "assistant", "content": ""}),
            json!({"content": "Hel"}),
            json!({"content": "lo"}),
            json!({})
        ]
    );
    let first = json_of(&e[0]);
    assert_eq!(
        (first["id"].as_str(), first["model"].as_str()),
        (Some("req-1"), Some("claude"))
    );
    assert_eq!(first["object"], "chat.completion.chunk");
    assert_eq!(json_of(&e[3])["choices"][0]["finish_reason"], "stop");
    let usage = json_of(&e[4]);
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 17, "completion_tokens": 2, "total_tokens": 19,
            "prompt_tokens_details": {"cached_tokens": 10}})
    );
    assert_eq!(e[5], "[DONE]");
}

#[test]
fn a_streams_metadata_cache_details_reach_the_metered_usage_split_by_ttl() {
    let mut s = event("messageStart", json!({"role": "assistant"}));
    s.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "hi"}}),
    ));
    s.extend(event("messageStop", json!({"stopReason": "end_turn"})));
    s.extend(event(
        "metadata",
        json!({"usage": {"inputTokens": 7, "outputTokens": 2, "totalTokens": 319,
            "cacheWriteInputTokens": 300,
            "cacheDetails": [{"inputTokens": 250, "ttl": "1h"}, {"inputTokens": 50, "ttl": "5m"}]}}),
    ));
    let e = translate(&s);
    let mut metered = crate::usage::StreamUsage::chat(true);
    for data in &e {
        metered.observe(data);
    }
    assert_eq!(
        metered.tokens(),
        Some(crate::usage::TokenCounts::new(307, 2, 0).with_writes(50, 250))
    );
}

#[test]
fn tool_use_streams_as_openai_tool_call_deltas_and_reasoning_as_reasoning_content() {
    let e = translate(&tool_answer());
    let deltas: Vec<Value> = e
        .iter()
        .take(5)
        .map(|c| json_of(c)["choices"][0]["delta"].clone())
        .collect();
    assert_eq!(deltas[1], json!({"reasoning_content": "think"}));
    assert_eq!(
        deltas[2],
        json!({"tool_calls": [{"index": 0, "id": "tooluse_a", "type": "function",
            "function": {"name": "get_weather", "arguments": ""}}]})
    );
    assert_eq!(
        deltas[3],
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]})
    );
    assert_eq!(
        deltas[4],
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]})
    );
    assert_eq!(json_of(&e[5])["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(e.last().unwrap(), "[DONE]");
}

#[test]
fn a_lone_message_start_emits_no_data_event() {
    let mut t = Translator::default();
    assert!(t
        .push(&event("messageStart", json!({"role": "assistant"})))
        .is_empty());
    assert!(t
        .push(&event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": ""}})
        ))
        .is_empty());
    let first = events(&t.push(&event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "x"}}),
    )));
    assert_eq!(
        first.len(),
        2,
        "the role chunk goes out with the first content"
    );
    assert!(
        t.end().is_empty(),
        "a stream cut before messageStop ends with nothing"
    );
}

#[test]
fn a_stream_split_at_every_offset_gives_the_same_chunks() {
    let bytes = [text_answer(), tool_answer()].concat();
    let whole = translate(&text_answer());
    let mut t = Translator::new("req-1".into(), "claude".into());
    assert_eq!(
        events(&t.push(&bytes)),
        whole,
        "nothing is read after [DONE]"
    );
    for answer in [text_answer(), tool_answer()] {
        let whole = translate(&answer);
        for cut in 0..=answer.len() {
            let mut t = Translator::new("req-1".into(), "claude".into());
            let mut out = t.push(&answer[..cut]);
            out.extend(t.push(&answer[cut..]));
            out.extend(t.end());
            assert_eq!(events(&out), whole, "cut at {cut}");
        }
    }
}

#[test]
fn a_stop_without_metadata_still_ends_with_done_when_the_body_closes() {
    let mut bytes = event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "x"}}),
    );
    bytes.extend(event("messageStop", json!({"stopReason": "max_tokens"})));
    let e = translate(&bytes);
    assert_eq!(json_of(&e[2])["choices"][0]["finish_reason"], "length");
    assert_eq!(e.len(), 4);
    assert_eq!(e[3], "[DONE]");
}

#[test]
fn a_filtered_stop_is_a_content_filter_finish_even_with_no_content() {
    let e = translate(&event(
        "messageStop",
        json!({"stopReason": "guardrail_intervened"}),
    ));
    assert_eq!(json_of(&e[0])["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(
        json_of(&e[1])["choices"][0]["finish_reason"],
        "content_filter"
    );
}

fn error_of(e: &str) -> (String, String) {
    let v = json_of(e);
    (
        v["error"]["type"].as_str().unwrap().to_owned(),
        v["error"]["message"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn an_exception_frame_becomes_an_upper_camel_error_event_and_ends_reading() {
    let mut t = Translator::default();
    let mut bytes = exception("throttlingException", "Too many tokens");
    bytes.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "x"}}),
    ));
    let e = events(&t.push(&bytes));
    assert_eq!(e.len(), 1);
    let (kind, message) = error_of(&e[0]);
    assert_eq!(
        (kind.as_str(), message.as_str()),
        ("ThrottlingException", "Too many tokens")
    );
    assert_eq!(error_class(&kind), Some(ErrorClass::RateLimit));
    assert!(t
        .push(&event("messageStop", json!({"stopReason": "end_turn"})))
        .is_empty());
    assert!(t.end().is_empty());
}

#[test]
fn an_error_frame_uses_its_error_code_and_message() {
    let bytes = frame(
        &[
            (":message-type", "error"),
            (":error-code", "InternalFailure"),
            (":error-message", "boom"),
        ],
        b"",
    );
    let e = translate(&bytes);
    assert_eq!(
        error_of(&e[0]),
        ("InternalFailure".to_owned(), "boom".to_owned())
    );
}

#[test]
fn a_corrupt_frame_is_a_corrupt_frame_error_classed_as_server() {
    let mut bytes = text_answer();
    let at = bytes.len() - 1;
    bytes[at] ^= 1;
    let e = translate(&bytes);
    let (kind, _) = error_of(e.last().unwrap());
    assert_eq!(kind, CORRUPT_FRAME);
    assert_eq!(error_class(&kind), Some(ErrorClass::Server));
    assert!(!e.iter().any(|x| x == "[DONE]"));
}

#[test]
fn a_stop_for_malformed_output_is_an_error_event_classed_as_server() {
    for reason in ["malformed_model_output", "malformed_tool_use"] {
        let mut bytes = event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "x"}}),
        );
        bytes.extend(event("messageStop", json!({"stopReason": reason})));
        bytes.extend(event(
            "metadata",
            json!({"usage": {"inputTokens": 1, "outputTokens": 1}}),
        ));
        let e = translate(&bytes);
        assert_eq!(e.len(), 3, "{e:?}");
        let (kind, message) = error_of(&e[2]);
        assert!(message.contains(reason));
        assert_eq!(error_class(&kind), Some(ErrorClass::Server));
    }
}

#[test]
fn an_exception_frame_without_a_message_type_or_type_is_still_an_error() {
    let bare = frame(
        &[(":exception-type", "validationException")],
        br#"{"message":"bad"}"#,
    );
    assert_eq!(error_of(&translate(&bare)[0]).0, "ValidationException");
    let untyped = frame(&[(":message-type", "exception")], b"{}");
    assert_eq!(error_of(&translate(&untyped)[0]).0, "UnknownException");
}

#[test]
fn a_second_message_stop_sends_no_second_finish() {
    let mut bytes = event("messageStop", json!({"stopReason": "end_turn"}));
    bytes.extend(event("messageStop", json!({"stopReason": "max_tokens"})));
    let e = translate(&bytes);
    assert_eq!(e.len(), 3, "role, finish, [DONE]: {e:?}");
}
