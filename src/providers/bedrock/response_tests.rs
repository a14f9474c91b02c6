use super::*;

fn answer(content: Value, stop: &str, usage: Value) -> Vec<u8> {
    json!({"output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop, "usage": usage, "metrics": {"latencyMs": 120}})
    .to_string()
    .into_bytes()
}

fn chat(bytes: &[u8]) -> (Value, Option<TokenCounts>) {
    let (out, tokens) = read(bytes, 1_700_000_000).unwrap();
    (serde_json::from_slice(&out).unwrap(), tokens)
}

#[test]
fn text_becomes_a_chat_completion_with_usage() {
    let (c, tokens) = chat(&answer(
        json!([{"text": "Hello"}, {"text": " world"}]),
        "end_turn",
        json!({"inputTokens": 10, "outputTokens": 3, "totalTokens": 13}),
    ));
    assert_eq!(c["object"], "chat.completion");
    assert_eq!(c["created"], 1_700_000_000);
    assert!(c["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(
        c["choices"][0]["message"],
        json!({"role": "assistant", "content": "Hello world"})
    );
    assert_eq!(c["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        c["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13})
    );
    assert_eq!(tokens, Some(TokenCounts::new(10, 3, 0)));
}

#[test]
fn tool_use_becomes_tool_calls_with_the_input_serialized() {
    let (c, _) = chat(&answer(
        json!([{"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}]),
        "tool_use",
        json!({"inputTokens": 1, "outputTokens": 1}),
    ));
    let m = &c["choices"][0]["message"];
    assert_eq!(m["content"], Value::Null);
    assert_eq!(
        m["tool_calls"],
        json!([{"id": "tooluse_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}])
    );
    assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
}

#[test]
fn reasoning_text_comes_back_as_reasoning_content() {
    let (c, _) = chat(&answer(
        json!([{"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s"}}},
            {"reasoningContent": {"redactedContent": "AAAA"}}, {"text": "42"}]),
        "end_turn",
        json!({}),
    ));
    let m = &c["choices"][0]["message"];
    assert_eq!(
        (m["content"].as_str(), m["reasoning_content"].as_str()),
        (Some("42"), Some("hmm"))
    );
}

#[test]
fn cache_reads_and_writes_count_in_the_prompt_and_reads_show_as_cached() {
    let u = json!({"inputTokens": 10, "outputTokens": 5, "totalTokens": 45,
        "cacheReadInputTokens": 20, "cacheWriteInputTokens": 10});
    let (c, tokens) = chat(&answer(json!([{"text": "x"}]), "end_turn", u));
    assert_eq!(
        c["usage"],
        json!({"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45,
            "prompt_tokens_details": {"cached_tokens": 20},
            "cache_creation_input_tokens": 10,
            "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 0}})
    );
    assert_eq!(
        tokens,
        Some(TokenCounts::new(40, 5, 20).with_writes(10, 0)),
        "a write without cacheDetails is a 5-minute one"
    );
}

#[test]
fn cache_details_split_the_writes_by_ttl_and_the_chat_usage_reads_back_the_same_counts() {
    let u = json!({"inputTokens": 10, "outputTokens": 5, "totalTokens": 345,
        "cacheWriteInputTokens": 300,
        "cacheDetails": [{"inputTokens": 200, "ttl": "1h"}, {"inputTokens": 100, "ttl": "5m"}]});
    let (c, tokens) = chat(&answer(json!([{"text": "x"}]), "end_turn", u));
    let want = Some(TokenCounts::new(310, 5, 0).with_writes(100, 200));
    assert_eq!(tokens, want);
    let read_back = crate::usage::answer_usage(&serde_json::to_vec(&c).unwrap()).unwrap();
    assert_eq!(read_back, want, "{}", c["usage"]);
}

#[test]
fn an_answer_without_cache_writes_translates_its_usage_as_before() {
    let u = json!({"inputTokens": 10, "outputTokens": 5, "totalTokens": 15});
    let (c, _) = chat(&answer(json!([{"text": "x"}]), "end_turn", u));
    assert_eq!(
        c["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    );
}

#[test]
fn an_answer_without_usage_reports_unknown_tokens_not_zero() {
    let (_, tokens) = chat(&answer(json!([{"text": "x"}]), "end_turn", json!(null)));
    assert_eq!(tokens, None);
}

#[test]
fn stop_reasons_become_finish_reasons() {
    for (stop, finish) in [
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("content_filtered", "content_filter"),
        ("guardrail_intervened", "content_filter"),
    ] {
        let (c, _) = chat(&answer(json!([]), stop, json!({})));
        assert_eq!(c["choices"][0]["finish_reason"], finish, "{stop}");
    }
}

#[test]
fn malformed_model_output_or_tool_use_is_the_candidates_failure() {
    for stop in ["malformed_model_output", "malformed_tool_use"] {
        let err = read(&answer(json!([{"text": "x"}]), stop, json!({})), 0).unwrap_err();
        assert!(err.contains(stop), "{err}");
    }
}

#[test]
fn a_body_that_is_not_a_converse_answer_is_refused() {
    assert!(read(b"not json", 0).is_err());
    assert!(read(br#"{"choices":[]}"#, 0).is_err());
    assert!(read(br#"{"output":{"message":{"content":"text"}}}"#, 0).is_err());
}

#[test]
fn the_id_and_model_are_the_callers_when_given() {
    let (out, _) = read_named(
        &answer(json!([]), "end_turn", json!({})),
        5,
        "req-1",
        "claude",
    )
    .unwrap();
    let c: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        (c["id"].as_str(), c["model"].as_str()),
        (Some("req-1"), Some("claude"))
    );
}

#[test]
fn a_content_filter_or_guardrail_stop_is_a_refusal_whatever_the_content() {
    assert!(is_refusal(&answer(
        json!([]),
        "content_filtered",
        json!({})
    )));
    assert!(is_refusal(&answer(
        json!([{"text": "I"}]),
        "guardrail_intervened",
        json!({})
    )));
    assert!(!is_refusal(&answer(json!([]), "end_turn", json!({}))));
    assert!(!is_refusal(b"{}"));
    assert!(!is_refusal(b"oops"));
}
