//! Bedrock end to end against a mock that recomputes every SigV4 signature with botocore and
//! streams real event-stream frames: signed calls served on the chat and Messages surfaces,
//! streamed and not; a wrong secret refused as AWS refuses it and rotated past; a throttle (no
//! hint) parking its key; an exception frame before the first byte failing over.

use crate::support::gateway::{Gateway, Resp, Tenant};
use crate::support::python_mock::PythonMock;
use serde_json::json;

const MODEL: &str = "anthropic.claude-3-5-sonnet-20240620-v1:0";

/// Provider `br` (keys: `AKID1` signed, `AKID2` signed with a session token, failover) serving
/// model `claude-br`.
fn tenant<'g>(gw: &'g Gateway, hint: &str, keys: &[&str]) -> (Tenant<'g>, PythonMock) {
    let mock = PythonMock::start(
        "bedrock_mock.py",
        &json!({
        "credentials": {"AKID1": "secret-one", "AKID2": "secret-two"}, "api_keys": ["ABSKapikey"]}),
    );
    let t = gw.tenant(hint);
    t.put_ok(
        "/providers/br",
        json!({"kind": "bedrock", "base_url": mock.url(), "region": "us-east-1", "keys": keys,
            "key_strategy": "failover", "timeout_ms": 5000}),
    );
    t.put_ok(
        "/models/claude-br",
        json!({"provider": "br", "upstream_model": MODEL, "context_window": 200000,
            "input_price_per_mtok": 3, "output_price_per_mtok": 15}),
    );
    (t, mock)
}

const KEYS: [&str; 2] = ["AKID1:secret-one", "AKID2:secret-two:SESSIONTOKEN"];

fn chat(t: &Tenant<'_>, stream: bool) -> Resp {
    let body = json!({"model": "claude-br", "stream": stream,
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]});
    t.post_with("/v1/chat/completions", &body, &[])
}

#[test]
fn a_signed_converse_call_is_served_streamed_and_not_with_its_usage() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "bedrock-sign", &KEYS);
    let r = chat(&t, false);
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.json();
    assert_eq!(
        v["choices"][0]["message"]["content"],
        format!("Hello from {MODEL}.")
    );
    assert_eq!(v["usage"]["prompt_tokens"], 11);
    assert_eq!(r.header("x-cognigate-platform"), Some("bedrock"));
    let r = chat(&t, true);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.text.contains("Hello") && r.text.ends_with("data: [DONE]\n\n"),
        "{}",
        r.text
    );
    let calls = mock.calls();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c["refused"].is_null()), "{calls:?}");
    assert_eq!(
        calls[0]["path"],
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
    );
    assert_eq!(
        calls[1]["path"],
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream"
    );
    assert_eq!(calls[0]["body"]["system"], json!([{"text": "be brief"}]));
}

#[test]
fn the_messages_surface_is_served_from_bedrock_streamed() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "bedrock-messages", &KEYS);
    let body = json!({"model": "claude-br", "max_tokens": 50, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/messages", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("event: message_stop"), "{}", r.text);
}

#[test]
fn a_wrong_secret_is_refused_as_aws_refuses_it_and_the_next_key_serves() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "bedrock-badsig", &["AKID1:not-the-secret", KEYS[1]]);
    let r = chat(&t, false);
    assert_eq!(r.status, 200, "{}", r.text);
    let calls = mock.calls();
    assert_eq!(calls[0]["refused"], "InvalidSignatureException");
    assert_eq!(
        (calls[1]["key"].as_str(), calls[1]["refused"].is_null()),
        (Some("AKID2"), true)
    );
    assert_eq!(calls[1]["session_token"], "SESSIONTOKEN");
}

#[test]
fn a_bedrock_throttle_without_a_hint_parks_the_key() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "bedrock-throttle", &KEYS);
    mock.script(json!({"times": 1, "key": "AKID1", "error": "ThrottlingException"}));
    assert_eq!(chat(&t, false).status, 200);
    assert_eq!(chat(&t, false).status, 200);
    let keys: Vec<String> = mock
        .calls()
        .iter()
        .map(|c| c["key"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        keys,
        ["AKID1", "AKID2", "AKID2"],
        "AKID1 sits out its 10 s park"
    );
}

#[test]
fn an_exception_frame_before_the_first_byte_fails_over() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "bedrock-exception", &KEYS);
    mock.script(json!({"times": 1, "key": "AKID1", "stream_exception": "throttlingException"}));
    let r = chat(&t, true);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.ends_with("data: [DONE]\n\n"), "{}", r.text);
    assert!(
        !r.text.contains("scripted"),
        "no upstream text reaches the caller"
    );
    let keys: Vec<String> = mock
        .calls()
        .iter()
        .map(|c| c["key"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(keys, ["AKID1", "AKID2"]);
}
