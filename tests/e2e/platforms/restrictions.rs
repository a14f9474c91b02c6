//! Data restrictions end to end: a `pii` request kept off the providers outside its
//! restriction while any other request still uses them, a pin outside refused with 403
//! `restricted`, 503 `no_candidates` naming the restriction, a cached answer from outside never
//! served to a restricted request, and `explain` showing which restrictions applied.

use crate::support::gateway::{eventually, Gateway, Resp, Tenant};
use crate::support::response_cache::{answer, stored, SETTLED};
use cognigate::mock::MockProvider;
use serde_json::{json, Value};

const PII: (&str, &str) = ("X-CogniGate-Metadata", r#"{"data_class":"pii"}"#);

/// The classic restriction: `pii` only on Bedrock.
fn pii_on_bedrock() -> Value {
    json!({"when": {"metadata.data_class": "pii"}, "allowed_platforms": ["bedrock"]})
}

/// Provider `direct` (OpenAI-compatible, platform `direct`) serving `m-direct` ($1) and
/// provider `bedrock` (platform `bedrock`) serving `m-bedrock` ($2); rule `claude` →
/// [m-direct, m-bedrock]; `settings` as given.
fn tenant<'g>(gw: &'g Gateway, hint: &str, settings: Value) -> (Tenant<'g>, [MockProvider; 2]) {
    let (direct, bedrock) = (
        MockProvider::start(hint).unwrap(),
        MockProvider::start(hint).unwrap(),
    );
    let t = gw.tenant(hint);
    for (name, mock) in [("direct", &direct), ("bedrock", &bedrock)] {
        t.put_ok(
            &format!("/providers/{name}"),
            json!({"kind": "openai", "base_url": mock.url(), "keys": ["sk-1"],
                "platform": name, "timeout_ms": 5000}),
        );
    }
    t.model("m-direct", "direct", 1.0, 8000);
    t.model("m-bedrock", "bedrock", 2.0, 8000);
    assert_eq!(t.rule("claude", &["m-direct", "m-bedrock"]).status, 200);
    t.put_ok("/settings", settings);
    (t, [direct, bedrock])
}

fn chat(t: &Tenant<'_>, model: &str, headers: &[(&str, &str)]) -> Resp {
    let body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
    t.post_with("/v1/chat/completions", &body, headers)
}

fn provider(r: &Resp) -> String {
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-cognigate-provider").unwrap().to_owned()
}

#[test]
fn a_pii_request_is_kept_off_the_disallowed_provider_while_a_non_pii_request_still_uses_it() {
    let gw = Gateway::shared();
    let (t, [direct, bedrock]) = tenant(
        gw,
        "restrict-pii",
        json!({"restrictions": [pii_on_bedrock()]}),
    );
    let shown = gw.admin("GET", &t.path("/settings"), None).json();
    assert_eq!(shown["restrictions"], json!([pii_on_bedrock()]), "{shown}");
    let pii = chat(&t, "claude", &[PII]);
    assert_eq!(provider(&pii), "bedrock");
    assert_eq!(pii.header("x-cognigate-platform"), Some("bedrock"));
    assert_eq!((direct.count(), bedrock.count()), (0, 1));
    // Whatever name it asks for: the alias and the bare model id of the direct provider too.
    t.put_ok("/aliases/cheapest", json!({"cost_tier": "cheapest"}));
    assert_eq!(provider(&chat(&t, "cheapest", &[PII])), "bedrock");
    assert_eq!(provider(&chat(&t, "auto:cheap", &[PII])), "bedrock");
    assert_eq!(direct.count(), 0);
    // Without the label the restriction does not apply: the chain's first position serves.
    assert_eq!(provider(&chat(&t, "claude", &[])), "direct");
    assert_eq!(provider(&chat(&t, "cheapest", &[])), "direct");
    assert_eq!(direct.count(), 2);
}

#[test]
fn a_pin_outside_a_restriction_is_403_restricted_and_one_inside_serves() {
    let gw = Gateway::shared();
    let (t, [direct, _bedrock]) = tenant(
        gw,
        "restrict-pin",
        json!({"restrictions": [pii_on_bedrock()]}),
    );
    let r = chat(&t, "claude", &[PII, ("X-CogniGate-Pin-Provider", "direct")]);
    assert_eq!(r.status, 403, "{}", r.text);
    let v = r.json();
    assert_eq!(v["error"]["code"], "restricted", "{v}");
    assert_eq!(v["error"]["param"], "X-CogniGate-Pin-Provider", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("restrictions[0] (allowed_platforms [bedrock])"),
        "{message}"
    );
    let r = chat(&t, "claude", &[PII, ("X-CogniGate-Pin-Platform", "direct")]);
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (403, Some("restricted"))
    );
    assert_eq!(direct.count(), 0);
    let inside = chat(
        &t,
        "claude",
        &[PII, ("X-CogniGate-Pin-Platform", "bedrock")],
    );
    assert_eq!(provider(&inside), "bedrock");
    // The same pin without the label is no matter of the restriction.
    assert_eq!(
        provider(&chat(
            &t,
            "claude",
            &[("X-CogniGate-Pin-Provider", "direct")]
        )),
        "direct"
    );
}

#[test]
fn no_candidate_inside_every_matching_restriction_is_503_no_candidates_naming_it() {
    let gw = Gateway::shared();
    let vertex_for_code = json!({"when": {"params.tools": true}, "allowed_platforms": ["vertex"]});
    let (t, [direct, bedrock]) = tenant(
        gw,
        "restrict-none",
        json!({"restrictions": [pii_on_bedrock(), vertex_for_code]}),
    );
    let body = json!({"model": "claude", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]});
    let r = t.post_with("/v1/chat/completions", &body, &[PII]);
    assert_eq!(r.status, 503, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("no_candidates"));
    let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("restrictions[0] (allowed_platforms [bedrock]) and restrictions[1] (allowed_platforms [vertex]) leaves no candidate"),
        "{message}"
    );
    assert_eq!((direct.count(), bedrock.count()), (0, 0));
    // The label alone matches only the first: Bedrock serves.
    assert_eq!(provider(&chat(&t, "claude", &[PII])), "bedrock");
}

#[test]
fn a_cached_answer_produced_outside_a_restriction_is_not_served_to_a_request_it_matches() {
    let gw = Gateway::shared();
    let cache = json!({"ttl_s": 300});
    let (t, [direct, bedrock]) = tenant(gw, "restrict-cache", json!({"cache": cache}));
    direct.set_default(answer("from direct"));
    bedrock.set_default(answer("from bedrock"));
    let first = chat(&t, "claude", &[]);
    assert_eq!(provider(&first), "direct");
    stored(&t, &first);
    assert_eq!(
        chat(&t, "claude", &[]).header("x-cognigate-cache"),
        Some("hit")
    );
    // Every request for `claude` is now restricted to Bedrock: the stored direct answer is
    // outside, so the request goes upstream to Bedrock (whose answer may then be stored).
    let claude_on_bedrock =
        json!({"when": {"params.model": "claude"}, "allowed_platforms": ["bedrock"]});
    t.put_ok(
        "/settings",
        json!({"cache": cache, "restrictions": [claude_on_bedrock]}),
    );
    eventually("the restriction in effect", SETTLED, || {
        chat(&t, "claude", &[]).header("x-cognigate-provider") == Some("bedrock")
    });
    assert!(bedrock.count() >= 1);
    for _ in 0..3 {
        let r = chat(&t, "claude", &[]);
        assert_eq!(provider(&r), "bedrock", "{}", r.text);
        assert!(r.text.contains("from bedrock"), "{}", r.text);
    }
}

#[test]
fn explain_shows_which_restrictions_applied_with_the_task_and_agent() {
    let gw = Gateway::shared();
    let code_off_direct =
        json!({"when": {"params.task": "code"}, "allowed_platforms": ["bedrock"]});
    let (t, _mocks) = tenant(
        gw,
        "restrict-explain",
        json!({"restrictions": [pii_on_bedrock(), code_off_direct]}),
    );
    let explain = |q: &str| {
        let r = gw.admin("GET", &t.path(&format!("/explain?{q}")), None);
        assert_eq!(r.status, 200, "{}", r.text);
        r.json()
    };
    let pii = explain("model=claude&metadata=%7B%22data_class%22%3A%22pii%22%7D");
    let applied = pii["restrictions"].as_array().unwrap();
    assert_eq!(applied.len(), 1, "{pii}");
    assert_eq!(applied[0]["index"], 0);
    assert_eq!(applied[0]["allowed_platforms"], json!(["bedrock"]));
    assert_eq!(pii["candidates"].as_array().unwrap().len(), 1, "{pii}");
    assert_eq!(pii["candidates"][0]["provider"], "bedrock");
    let claude_code = explain("model=claude&agent=claude-code");
    assert_eq!(
        (&claude_code["task"], &claude_code["agent"]),
        (&json!("code"), &json!("claude-code"))
    );
    assert_eq!(claude_code["restrictions"][0]["index"], 1, "{claude_code}");
    let plain = explain("model=claude&task=chat");
    assert_eq!(plain["restrictions"], json!([]), "{plain}");
    assert_eq!(plain["candidates"].as_array().unwrap().len(), 2, "{plain}");
}
