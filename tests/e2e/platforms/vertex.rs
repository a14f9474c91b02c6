//! Vertex AI end to end against a mock that verifies every service-account assertion with the
//! account's public key (PyJWT): Claude served through `rawPredict` and `streamRawPredict` on the
//! chat and Messages surfaces, with one token exchange per isolate; a refused assertion is the
//! key's auth failure, rotated past; Google's models in Gemini's shape, by token and by an
//! express-mode API key.

use crate::support::gateway::{Gateway, Resp, Tenant};
use crate::support::python_mock::PythonMock;
use serde_json::{json, Value};

pub const CLAUDE: &str = "claude-sonnet-4-5@20250929";
const PROJECT: &str = "proj-1";
const REGION: &str = "us-east5";
const EXPRESS_KEY: &str = "AQ.express-key-0001";

pub fn mock() -> PythonMock {
    PythonMock::start(
        "vertex_mock.py",
        &json!({"project": PROJECT, "region": REGION, "api_keys": [EXPRESS_KEY]}),
    )
}

/// The service-account file the mock trusts (or, `rogue`, one it does not), indented as Google
/// ships it.
pub fn account(mock: &PythonMock, rogue: bool) -> String {
    let path = if rogue {
        "/__account?rogue=1"
    } else {
        "/__account"
    };
    serde_json::to_string_pretty(&mock.get(path)).unwrap_or_default()
}

/// Provider `name` on the mock with `publisher` and `keys`, and model `model` on it.
pub fn provider(
    t: &Tenant<'_>,
    mock: &PythonMock,
    (name, model): (&str, &str),
    publisher: &str,
    keys: &[String],
) {
    t.put_ok(
        &format!("/providers/{name}"),
        json!({"kind": "vertex", "base_url": mock.url(), "project": PROJECT, "region": REGION,
            "publisher": publisher, "keys": keys, "key_strategy": "failover", "timeout_ms": 5000}),
    );
    let upstream = if publisher == "google" {
        "gemini-2.5-flash"
    } else {
        CLAUDE
    };
    t.put_ok(
        &format!("/models/{model}"),
        json!({"provider": name, "upstream_model": upstream, "context_window": 200000,
            "input_price_per_mtok": 3, "output_price_per_mtok": 15}),
    );
}

fn chat(t: &Tenant<'_>, model: &str, stream: bool) -> Resp {
    let body = json!({"model": model, "stream": stream,
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]});
    t.post_with("/v1/chat/completions", &body, &[])
}

/// A fresh mock and a tenant of the shared gateway.
fn world(hint: &str) -> (Tenant<'static>, PythonMock) {
    (Gateway::shared().tenant(hint), mock())
}

fn of_kind(calls: &[Value], kind: &str) -> Vec<Value> {
    calls
        .iter()
        .filter(|c| c["kind"] == kind)
        .cloned()
        .collect()
}

#[test]
fn a_service_account_token_is_exchanged_once_and_serves_claude_streamed_and_not() {
    let (t, mock) = world("vertex-claude");
    provider(
        &t,
        &mock,
        ("vx", "claude-vx"),
        "anthropic",
        &[account(&mock, false)],
    );
    let r = chat(&t, "claude-vx", false);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json()["choices"][0]["message"]["content"],
        format!("Hello from {CLAUDE} on Vertex.")
    );
    assert_eq!(r.json()["usage"]["prompt_tokens"], 13);
    assert_eq!(r.header("x-cognigate-platform"), Some("vertex"));
    let r = chat(&t, "claude-vx", true);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.text.contains("Hello ") && r.text.ends_with("data: [DONE]\n\n"),
        "{}",
        r.text
    );
    let body = json!({"model": "claude-vx", "max_tokens": 50, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/messages", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("event: message_stop"), "{}", r.text);
    let calls = mock.calls();
    let tokens = of_kind(&calls, "token");
    assert_eq!(
        tokens.len(),
        1,
        "one exchange, then the isolate's cached token: {calls:?}"
    );
    assert!(tokens[0]["refused"].is_null(), "{tokens:?}");
    let models = of_kind(&calls, "model");
    assert_eq!(models.len(), 3);
    assert!(models.iter().all(|c| c["who"] == "token"), "{models:?}");
    let base = format!("/v1/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models");
    assert_eq!(
        models[0]["path"],
        format!("{base}/claude-sonnet-4-5%4020250929:rawPredict")
    );
    assert_eq!(
        models[1]["path"],
        format!("{base}/claude-sonnet-4-5%4020250929:streamRawPredict")
    );
    assert_eq!(models[2]["body"]["anthropic_version"], "vertex-2023-10-16");
    assert!(models[2]["body"].get("model").is_none());
}

#[test]
fn a_refused_assertion_is_the_keys_auth_failure_and_the_next_key_serves() {
    let (t, mock) = world("vertex-rogue");
    let keys = [account(&mock, true), account(&mock, false)];
    provider(&t, &mock, ("vx", "claude-vx"), "anthropic", &keys);
    let r = chat(&t, "claude-vx", false);
    assert_eq!(r.status, 200, "{}", r.text);
    let calls = mock.calls();
    let refused: Vec<&Value> = calls.iter().map(|c| &c["refused"]).collect();
    assert_eq!(
        refused,
        [&json!("invalid_grant"), &Value::Null, &Value::Null],
        "{calls:?}"
    );
    let line =
        t.gw.request_line(r.header("x-cognigate-request-id").unwrap_or_default());
    assert_eq!(line["attempts"][0]["failure"], "auth", "{line}");
    assert!(
        !line.to_string().contains("PRIVATE KEY"),
        "no key in a log line"
    );
}

#[test]
fn google_models_on_vertex_speak_gemini_by_token_and_by_an_express_api_key() {
    let (t, mock) = world("vertex-google");
    provider(
        &t,
        &mock,
        ("vg", "gem-vx"),
        "google",
        &[account(&mock, false)],
    );
    provider(
        &t,
        &mock,
        ("ve", "gem-express"),
        "google",
        &[EXPRESS_KEY.to_owned()],
    );
    for model in ["gem-vx", "gem-express"] {
        let r = chat(&t, model, false);
        assert_eq!(r.status, 200, "{}", r.text);
        assert!(r.text.contains("on Vertex."), "{}", r.text);
        let r = chat(&t, model, true);
        assert_eq!(r.status, 200, "{}", r.text);
        assert!(r.text.ends_with("data: [DONE]\n\n"), "{}", r.text);
    }
    let models = of_kind(&mock.calls(), "model");
    let paths: Vec<&str> = models
        .iter()
        .map(|c| c["path"].as_str().unwrap_or(""))
        .collect();
    let base = format!("/v1/projects/{PROJECT}/locations/{REGION}/publishers/google/models");
    assert_eq!(
        paths,
        [
            format!("{base}/gemini-2.5-flash:generateContent"),
            format!("{base}/gemini-2.5-flash:streamGenerateContent?alt=sse"),
            "/v1/publishers/google/models/gemini-2.5-flash:generateContent".to_owned(),
            "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
                .to_owned(),
        ]
    );
    let who: Vec<&str> = models
        .iter()
        .map(|c| c["who"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(who, ["token", "token", "api_key", "api_key"]);
}
