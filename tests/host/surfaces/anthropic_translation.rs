//! Recorded request/response pairs translated both ways, and a recorded Messages stream translated
//! to `chat.completion.chunk` events (fixtures in tests/fixtures/anthropic).

use cognigate::api::ChatRequest;
use cognigate::config::admin_body::{parse_body, ModelBody};
use cognigate::config::{CatalogModel, ModelId, Provider, ProviderKey};
use cognigate::providers::{anthropic, prepare, read_response, Dialect, StreamDecoder};
use cognigate::stream::{Relay, RelayStep};
use cognigate::usage::StreamUsage;
use serde_json::{json, Value};
use std::path::Path;

fn fixture_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/anthropic"
    ))
}

fn model(spec: &Value) -> CatalogModel {
    let mut body = json!({"provider": "anthropic", "context_window": 200000});
    for (k, v) in spec.as_object().unwrap() {
        body[k] = v.clone();
    }
    let m: ModelBody = parse_body(body.to_string().as_bytes()).unwrap();
    m.validate(ModelId::parse("claude").unwrap()).unwrap()
}

fn pairs() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 3, "fixtures missing");
    out
}

/// An Anthropic provider (its keys are not the ones `prepare` is given).
fn anthropic_provider() -> Provider {
    let body = br#"{"kind":"anthropic","base_url":"https://api.anthropic.com/v1","keys":["sk-ant-other"]}"#;
    let b: cognigate::config::admin_body::ProviderBody =
        cognigate::config::admin_body::parse_body(body).unwrap();
    b.validate(cognigate::config::ProviderName::parse("ant").unwrap())
        .unwrap()
        .resolve(|_| None)
        .unwrap()
}

#[test]
fn recorded_openai_requests_translate_to_the_recorded_messages_requests() {
    let key = ProviderKey::from_secret("sk-ant-test".into()).unwrap();
    for (name, f) in pairs() {
        let req = ChatRequest::parse(f["openai_request"].to_string().as_bytes()).unwrap();
        let prepared = prepare(&anthropic_provider(), &model(&f["model"]), &key, &req);
        assert_eq!(prepared.path, "messages", "{name}");
        let sent: Value = serde_json::from_slice(&prepared.body).unwrap();
        assert_eq!(sent, f["anthropic_request"], "{name}");
        let headers: Vec<(&str, &str)> = prepared
            .headers
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .collect();
        assert!(headers.contains(&("x-api-key", "sk-ant-test")), "{name}");
        assert!(
            headers.contains(&("anthropic-version", anthropic::API_VERSION)),
            "{name}"
        );
        assert!(
            !headers.iter().any(|(k, _)| *k == "authorization"),
            "{name}"
        );
    }
}

#[test]
fn recorded_messages_responses_translate_to_the_recorded_chat_completions() {
    for (name, f) in pairs() {
        let bytes = serde_json::to_vec(&f["anthropic_response"]).unwrap();
        let out = read_response(Dialect::Anthropic, bytes, 1_800_000_000).unwrap();
        let out: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(out, f["openai_response"], "{name}");
    }
}

#[test]
fn a_recorded_messages_stream_becomes_openai_chunks_ending_in_done() {
    let sse = std::fs::read(fixture_dir().join("stream_tool_use.sse")).unwrap();
    let expected =
        std::fs::read_to_string(fixture_dir().join("stream_tool_use.expected.jsonl")).unwrap();
    // However the bytes arrive, the same events come out.
    for chunk_size in [1, 7, 64, sse.len()] {
        let mut decoder = StreamDecoder::new(Dialect::Anthropic, "m", 0);
        let out: Vec<u8> = sse
            .chunks(chunk_size)
            .flat_map(|c| decoder.decode(c.to_vec()))
            .collect();
        let text = String::from_utf8(out).unwrap();
        let got: Vec<Value> = text
            .split("\n\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_owned())))
            .collect();
        let want: Vec<Value> = expected
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| Value::String(l.to_owned())))
            .collect();
        assert_eq!(got, want, "chunk size {chunk_size}");
    }
}

#[test]
fn without_include_usage_the_relay_strips_the_usage_chunk_and_still_meters_its_tokens() {
    let sse = std::fs::read(fixture_dir().join("stream_tool_use.sse")).unwrap();
    let req = ChatRequest::parse(br#"{"model":"m","stream":true}"#).unwrap();
    let wants = anthropic::stream::wants_usage(&req);
    let mut decoder = StreamDecoder::new(Dialect::Anthropic, "m", 0);
    let mut relay = Relay::metering(StreamUsage::chat(!wants));
    let RelayStep::Finish { bytes, .. } = relay.on_chunk(&decoder.decode(sse)) else {
        panic!("the recorded stream ends")
    };
    let text = String::from_utf8(bytes).unwrap();
    assert!(!text.contains("\"usage\""));
    assert!(text.ends_with("data: [DONE]\n\n"));
    // message_start: 472 input tokens; message_delta: 89 output tokens.
    let tokens = relay.tokens().unwrap();
    assert_eq!((tokens.prompt, tokens.completion), (472, 89));
}

#[test]
fn a_translated_streams_cache_writes_keep_their_ttl_split_for_the_cost() {
    let events = [
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let sse: String = events
        .iter()
        .map(|e| {
            let kind = serde_json::from_str::<Value>(e).unwrap()["type"].clone();
            format!("event: {}\ndata: {e}\n\n", kind.as_str().unwrap())
        })
        .collect();
    let mut decoder = StreamDecoder::new(Dialect::Anthropic, "m", 0);
    let mut relay = Relay::metering(StreamUsage::chat(true));
    let RelayStep::Finish { bytes, .. } = relay.on_chunk(&decoder.decode(sse.into_bytes())) else {
        panic!("the stream ends")
    };
    assert!(!String::from_utf8(bytes).unwrap().contains("\"usage\""));
    let want = cognigate::usage::TokenCounts::new(1310, 4, 1000).with_writes(100, 200);
    assert_eq!(relay.tokens(), Some(want));
}

#[test]
fn an_anthropic_error_event_becomes_an_error_the_relay_recognises() {
    let mut decoder = StreamDecoder::new(Dialect::Anthropic, "m", 0);
    let out = decoder.decode(
        b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".to_vec(),
    );
    let mut relay = cognigate::stream::Relay::default();
    assert!(matches!(
        relay.on_chunk(&out),
        cognigate::stream::RelayStep::Finish {
            end: cognigate::stream::StreamEnd::Failed(_),
            ..
        }
    ));
}

#[test]
fn a_body_that_is_not_a_messages_response_is_a_provider_failure() {
    assert!(read_response(Dialect::Anthropic, b"{\"ok\":true}".to_vec(), 0).is_err());
    assert!(read_response(Dialect::Anthropic, b"<html>".to_vec(), 0).is_err());
}

#[test]
fn a_thinking_budget_added_to_max_tokens_saturates_instead_of_overflowing() {
    let key = ProviderKey::from_secret("sk-ant-test".into()).unwrap();
    let req = ChatRequest::parse(
        format!(
            r#"{{"model":"m","max_tokens":{max},"thinking":{{"type":"enabled","budget_tokens":{max}}}}}"#,
            max = u64::MAX
        )
        .as_bytes(),
    )
    .unwrap();
    let prepared = prepare(&anthropic_provider(), &model(&json!({})), &key, &req);
    let sent: Value = serde_json::from_slice(&prepared.body).unwrap();
    assert_eq!(sent["max_tokens"], u64::MAX);
}

#[test]
fn consecutive_turns_of_one_role_merge_and_system_messages_become_system() {
    let key = ProviderKey::from_secret("sk-ant-test".into()).unwrap();
    let req = ChatRequest::parse(
        json!({"model": "m", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "a"},
            {"role": "user", "content": [{"type": "text", "text": "b"}]},
            {"role": "assistant", "content": "c"},
            {"role": "developer", "content": "and kind"},
            {"role": "tool", "tool_call_id": "t1", "content": "42"},
            {"role": "user", "content": ""},
            {"role": "user", "content": "d"}
        ]})
        .to_string()
        .as_bytes(),
    )
    .unwrap();
    let prepared = prepare(&anthropic_provider(), &model(&json!({})), &key, &req);
    let sent: Value = serde_json::from_slice(&prepared.body).unwrap();
    assert_eq!(sent["system"], "be brief\n\nand kind");
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "c"}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "42"},
                {"type": "text", "text": "d"}
            ]}
        ])
    );
}
