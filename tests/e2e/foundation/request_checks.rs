//! The request checks, end to end on workerd against the mock: what a scoped key's model
//! list shows, embeddings that ask to stream, a tenant that requires an end user, and an answer
//! too large to hold. "No upstream call" is the mock's own count; "no breaker counted" is
//! `/v1/health` with a breaker that would open on its first counted failure.

use crate::support::gateway::{Gateway, Resp, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};

/// The breakers of `t` that are not closed.
fn breakers(t: &Tenant<'_>) -> Vec<Value> {
    let h = t.gw.request("GET", "/v1/health", Some(&t.key), None).json();
    h["breakers"].as_array().cloned().unwrap_or_default()
}

/// One counted failure opens a breaker: a check that nothing was counted.
fn trip_on_first_failure(t: &Tenant<'_>) {
    t.put_ok("/settings", json!({"breaker": {"error_threshold": 1}}));
}

fn post(t: &Tenant<'_>, path: &str, body: Value) -> Resp {
    t.gw.request("POST", path, Some(&t.key), Some(&body.to_string()))
}

/// A chat request with `X-CogniGate-User: user`; the status, and the error's `param` if any.
fn chat_as(t: &Tenant<'_>, body: &Value, user: &str) -> (u16, String) {
    let req = ureq::http::Request::builder()
        .method("POST")
        .uri(format!("{}/v1/chat/completions", t.gw.url))
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {}", t.key))
        .header("x-cognigate-user", user)
        .body(body.to_string())
        .unwrap();
    let mut resp = crate::support::gateway::agent().run(req).unwrap();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let param = v["error"]["param"].as_str().unwrap_or_default().to_owned();
    (resp.status().as_u16(), param)
}

fn ids(r: &Resp) -> Vec<String> {
    let mut ids: Vec<String> = r.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_scoped_keys_v1_models_lists_only_its_names_and_an_unlisted_name_is_404() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("models", &["sk-1"], "round_robin");
    t.model("m2", "p", 1.0, 8000);
    let (_, scoped) = t.key_with(json!({"models": ["m", "fast"]}));
    let all = gw.request("GET", "/v1/models", Some(&t.key), None);
    assert_eq!(all.status, 200, "{}", all.text);
    let every = ids(&all);
    assert!(every.contains(&"m2".to_owned()) && every.contains(&"best".to_owned()));
    let listed = gw.request("GET", "/v1/models", Some(&scoped), None);
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(ids(&listed), ["fast", "m"]);
    for name in ["m", "fast"] {
        let one = gw.request("GET", &format!("/v1/models/{name}"), Some(&scoped), None);
        assert_eq!(one.status, 200, "{name}: {}", one.text);
        assert_eq!(one.json()["id"], name);
    }
    // An unlisted name answers exactly as a name that does not exist.
    let unlisted = gw.request("GET", "/v1/models/m2", Some(&scoped), None);
    let missing = gw.request("GET", "/v1/models/no-such-model", Some(&scoped), None);
    assert_eq!(unlisted.status, 404, "{}", unlisted.text);
    assert_eq!(unlisted.error_code().as_deref(), Some("model_not_found"));
    assert_eq!(
        unlisted.text.replace("m2", "X"),
        missing.text.replace("no-such-model", "X")
    );
    let best = gw.request("GET", "/v1/models/best", Some(&scoped), None);
    assert_eq!(best.status, 404, "an unlisted alias too: {}", best.text);
    assert_eq!(
        gw.request("GET", "/v1/models/m2", Some(&t.key), None)
            .status,
        200,
        "the unscoped key still sees it"
    );
}

#[test]
fn embeddings_with_stream_true_are_400_with_no_upstream_call_and_the_breaker_stays_closed() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("embstream", &["sk-1"], "round_robin");
    trip_on_first_failure(&t);
    for _ in 0..3 {
        let r = post(
            &t,
            "/v1/embeddings",
            json!({"model": "m", "input": "hello", "stream": true}),
        );
        assert_eq!(r.status, 400, "{}", r.text);
        let e = &r.json()["error"];
        assert_eq!(e["type"], "invalid_request_error");
        assert_eq!(e["code"], "invalid_request");
        assert_eq!(e["param"], "stream");
    }
    assert_eq!(mock.count(), 0, "never forwarded");
    assert_eq!(breakers(&t), Vec::<Value>::new(), "no breaker counted it");
    // The same request without streaming is served.
    let r = post(
        &t,
        "/v1/embeddings",
        json!({"model": "m", "input": "hello", "stream": false}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(mock.count(), 1);
}

#[test]
fn with_end_user_required_a_request_without_an_end_user_is_400_param_user() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("enduser", &["sk-1"], "round_robin");
    let r = t.put_ok("/settings", json!({"end_user": {"required": true}}));
    assert_eq!(r.json()["end_user"], json!({"required": true}));
    let chat = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let refused = post(&t, "/v1/chat/completions", chat.clone());
    assert_eq!(refused.status, 400, "{}", refused.text);
    let e = &refused.json()["error"];
    assert_eq!(e["type"], "invalid_request_error");
    assert_eq!(e["code"], "invalid_request");
    assert_eq!(e["param"], "user");
    // A blank header names no one either.
    assert_eq!(chat_as(&t, &chat, " \t "), (400, "user".to_owned()));
    let messages =
        json!({"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]});
    let anthropic = post(&t, "/v1/messages", messages.clone());
    assert_eq!(anthropic.status, 400, "{}", anthropic.text);
    let v = anthropic.json();
    assert_eq!(v["type"], "error", "Anthropic-shaped: {v}");
    assert_eq!(v["error"]["type"], "invalid_request_error");
    assert_eq!(mock.count(), 0, "no upstream call");
    // Named in the header, or in the body (`user`; `metadata.user_id` on /v1/messages): served.
    assert_eq!(chat_as(&t, &chat, "bob"), (200, String::new()));
    let mut named = chat.clone();
    named["user"] = json!("alice");
    assert_eq!(post(&t, "/v1/chat/completions", named).status, 200);
    let mut named = messages;
    named["metadata"] = json!({"user_id": "alice"});
    let r = post(&t, "/v1/messages", named);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(mock.count(), 3);
}

#[test]
fn an_oversized_answer_falls_through_to_the_next_candidate_without_opening_a_breaker() {
    let gw = Gateway::shared();
    let t = gw.tenant("oversized");
    trip_on_first_failure(&t);
    let big = MockProvider::start("big").unwrap();
    let padding = "x".repeat(17 * 1024 * 1024);
    big.push(Rule::any(Reply::json(
        200,
        &format!(r#"{{"id":"c","object":"chat.completion","padding":"{padding}","choices":[]}}"#),
    )));
    let small = MockProvider::start("small").unwrap();
    t.provider("big", &big.url(), &["sk-big"], "failover");
    t.provider("small", &small.url(), &["sk-small"], "failover");
    t.model("m-big", "big", 1.0, 8000);
    t.model("m-small", "small", 1.0, 8000);
    assert_eq!(t.rule("chain", &["m-big", "m-small"]).status, 200);
    let r = t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("m-small"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
    assert_eq!((big.count(), small.count()), (1, 1));
    assert_eq!(breakers(&t), Vec::<Value>::new(), "no breaker counted it");
    let id = r.header("x-cognigate-request-id").unwrap().to_owned();
    let line = gw.request_line(&id);
    assert!(!line.is_null(), "the request's log line");
    assert_eq!(line["attempts"][0]["failure"], "oversized", "{line}");
    // And the big model is still tried first: its breaker is closed.
    let r = t.chat("chain");
    assert_eq!(r.status, 200);
    assert_eq!(big.count(), 2);
}
