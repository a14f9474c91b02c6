//! The platform every provider runs on, end to end: shown on the provider's GET and list, on
//! every answer (`X-CogniGate-Platform`, streamed too), and pinned by `X-CogniGate-Pin-Platform`
//! with the provider pin's chain semantics.

use crate::support::gateway::{Gateway, Resp, Tenant};
use cognigate::mock::MockProvider;
use serde_json::json;

/// Provider `oa` (OpenAI-compatible on the mock's host: `custom`) serving `m1` ($1), provider
/// `az` (Azure OpenAI: `azure`) serving `m2` ($2); rule `both` → [m1, m2].
fn tenant<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider, MockProvider) {
    let (oa, az) = (
        MockProvider::start(hint).unwrap(),
        MockProvider::start(hint).unwrap(),
    );
    let t = gw.tenant(hint);
    t.provider("oa", &oa.url(), &["sk-oa"], "failover");
    t.model("m1", "oa", 1.0, 8000);
    t.put_ok(
        "/providers/az",
        json!({"kind": "azure_openai", "base_url": super::azure::origin(&az), "api_version": "2024-10-21",
            "keys": ["az-key"], "timeout_ms": 5000}),
    );
    t.model("m2", "az", 2.0, 8000);
    assert_eq!(t.rule("both", &["m1", "m2"]).status, 200);
    (t, oa, az)
}

fn chat(t: &Tenant<'_>, model: &str, headers: &[(&str, &str)]) -> Resp {
    let body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
    t.post_with("/v1/chat/completions", &body, headers)
}

#[test]
fn each_provider_shows_its_platform_and_an_override_wins() {
    let gw = Gateway::shared();
    let (t, _oa, _az) = tenant(gw, "platform-view");
    let one = |name: &str| {
        gw.admin("GET", &t.path(&format!("/providers/{name}")), None)
            .json()
    };
    assert_eq!(one("oa")["platform"], "custom");
    assert_eq!(one("az")["platform"], "azure");
    let list = gw.admin("GET", &t.path("/providers"), None).json();
    let rows = list["data"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["platform"].is_string()), "{list}");
    t.put_ok(
        "/providers/direct-oa",
        json!({"kind": "openai", "base_url": "https://api.openai.com/v1", "keys": ["sk-x"]}),
    );
    assert_eq!(one("direct-oa")["platform"], "direct");
    t.put_ok(
        "/providers/vllm",
        json!({"kind": "openai", "base_url": "https://gpu.example/v1", "keys": ["sk-x"],
            "platform": "direct"}),
    );
    assert_eq!(one("vllm")["platform"], "direct");
    let bad = t.put(
        "/providers/bad",
        json!({"kind": "openai", "base_url": "https://gpu.example/v1", "keys": ["sk-x"],
            "platform": "gcp"}),
    );
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(bad.text.contains("platform"), "{}", bad.text);
}

#[test]
fn a_platform_pin_keeps_only_that_platforms_candidates() {
    let gw = Gateway::shared();
    let (t, oa, az) = tenant(gw, "platform-pin");
    let r = chat(&t, "both", &[("X-CogniGate-Pin-Platform", "azure")]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-provider"), Some("az"));
    assert_eq!(r.header("x-cognigate-platform"), Some("azure"));
    assert_eq!((oa.count(), az.count()), (0, 1));
    let r = chat(&t, "both", &[]);
    assert_eq!(r.header("x-cognigate-platform"), Some("custom"));
}

#[test]
fn a_platform_pin_leaving_no_candidate_is_503_no_candidates_naming_it() {
    let gw = Gateway::shared();
    let (t, oa, az) = tenant(gw, "platform-none");
    let r = chat(&t, "both", &[("X-CogniGate-Pin-Platform", "vertex")]);
    assert_eq!(r.status, 503, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("no_candidates"));
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("X-CogniGate-Pin-Platform 'vertex' leaves no candidate"),
        "{message}"
    );
    // Both pins keep the intersection: `oa` is not on `azure`.
    let both = [
        ("X-CogniGate-Pin-Platform", "azure"),
        ("X-CogniGate-Pin-Provider", "oa"),
    ];
    assert_eq!(chat(&t, "both", &both).status, 503);
    assert_eq!((oa.count(), az.count()), (0, 0));
}

#[test]
fn an_unknown_platform_is_400_unknown_platform_in_each_surfaces_shape() {
    let gw = Gateway::shared();
    let (t, oa, _az) = tenant(gw, "platform-bad");
    let r = chat(&t, "both", &[("X-CogniGate-Pin-Platform", "gcp")]);
    assert_eq!(r.status, 400, "{}", r.text);
    let v = r.json();
    assert_eq!(v["error"]["code"], "unknown_platform");
    assert_eq!(v["error"]["param"], "X-CogniGate-Pin-Platform");
    let body = json!({"model": "both", "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with(
        "/v1/messages",
        &body,
        &[("X-CogniGate-Pin-Platform", "gcp")],
    );
    assert_eq!(r.status, 400, "{}", r.text);
    let v = r.json();
    assert_eq!(v["type"], "error", "Anthropic's error shape: {v}");
    assert_eq!(v["error"]["type"], "invalid_request_error");
    assert_eq!(oa.count(), 0);
}

#[test]
fn the_platform_is_on_streamed_answers_too() {
    let gw = Gateway::shared();
    let (t, _oa, _az) = tenant(gw, "platform-stream");
    let body = json!({"model": "m2", "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/chat/completions", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-platform"), Some("azure"));
}
