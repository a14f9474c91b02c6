//! Refusal fallback end to end: with `on_refusal: "fallback"`, a
//! non-streamed safety refusal is sent once more to the next candidate of the chain, and the
//! answer says so in `X-CogniGate-Policy-Fallback` (`applied` or `unavailable`), on every caller
//! surface. Mock upstreams script the refusals: OpenAI's `finish_reason: "content_filter"` with
//! no content, Anthropic's `stop_reason: "refusal"`.

use crate::support::gateway::{Gateway, Resp, Tenant};
use crate::support::replies::content_filter;
use cognigate::mock::{MockProvider, Reply, Rule, Step};
use serde_json::json;
use std::time::Duration;

const SETTLED: Duration = Duration::from_secs(10);

fn chat(t: &Tenant<'_>, model: &str, headers: &[(&str, &str)]) -> Resp {
    let body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
    t.post_with("/v1/chat/completions", &body, headers)
}

/// Anthropic's safety refusal.
fn stop_refusal() -> Reply {
    Reply::json(
        200,
        &json!({"id": "msg_refused", "type": "message", "role": "assistant", "model": "claude-up",
            "content": [], "stop_reason": "refusal", "stop_sequence": null,
            "usage": {"input_tokens": 5, "output_tokens": 0}})
        .to_string(),
    )
}

/// A tenant with provider `p` on a fresh mock and models `m1` ($1 per million tokens) and `m2`
/// ($2); rule `guarded` → [m1, m2] with `on_refusal: fallback`, rule `solo` → [m1] with it, alias
/// `safe` (pin m1) with it, and rule `plain` → [m1, m2] without it.
fn tenant<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model("m1", "p", 1.0, 8000);
    t.model("m2", "p", 2.0, 8000);
    let guarded = json!({"match": "guarded", "chain": ["m1", "m2"], "on_refusal": "fallback"});
    t.put_ok("/routing-rules", guarded);
    t.put_ok(
        "/routing-rules",
        json!({"match": "plain", "chain": ["m1", "m2"]}),
    );
    let solo = json!({"match": "solo", "chain": ["m1"], "on_refusal": "fallback"});
    t.put_ok("/routing-rules", solo);
    t.put_ok(
        "/aliases/safe",
        json!({"pin": "m1", "on_refusal": "fallback"}),
    );
    (t, mock)
}

/// Provider `ant` (Anthropic family) on a fresh mock, serving model `claude`.
fn anthropic_claude(t: &Tenant<'_>, hint: &str) -> MockProvider {
    let ant = MockProvider::start(hint).unwrap();
    t.put_ok(
        "/providers/ant",
        json!({"kind": "anthropic", "base_url": ant.url(), "keys": ["sk-ant"], "timeout_ms": 5000}),
    );
    t.put_ok(
        "/models/claude",
        json!({"provider": "ant", "upstream_model": "claude-up", "context_window": 200000,
            "input_price_per_mtok": 3, "output_price_per_mtok": 15}),
    );
    ant
}

fn refuse_once(mock: &MockProvider, model: &str, reply: Reply) {
    mock.push(Rule::any(reply).model(model).times(1));
}

fn policy(r: &Resp) -> Option<&str> {
    r.header("x-cognigate-policy-fallback")
}

#[test]
fn a_scripted_refusal_followed_by_a_normal_answer_returns_200_with_applied_and_the_second_answer() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "refusal-applied");
    refuse_once(&mock, "m1", content_filter());
    let r = chat(&t, "guarded", &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(policy(&r), Some("applied"));
    assert_eq!(r.header("x-cognigate-model"), Some("m2"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
    let answer = &r.json()["choices"][0];
    assert_eq!(
        answer["message"]["content"],
        "Hello from refusal-applied, model m2."
    );
    assert_eq!(answer["finish_reason"], "stop");
    let models: Vec<String> = mock
        .calls()
        .iter()
        .filter_map(|c| c.model.clone())
        .collect();
    assert_eq!(
        models,
        ["m1", "m2"],
        "sent once more, to the next candidate"
    );
    // Both answers were generated and billed: one record, summed, each at its own price:
    // 5 tokens at $1 (the refusal) and 12 at $2 (the answer) per million.
    assert_eq!(r.header("x-cognigate-cost-usd"), Some("0.000029"));
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert_eq!(
        rec["tokens"],
        json!({"prompt": 10, "completion": 7, "cached": 0})
    );
    assert_eq!(rec["served_model"], "m2");
    assert!(
        (rec["cost_usd"].as_f64().unwrap() - 0.000029).abs() < 1e-12,
        "{rec}"
    );
    // The log line names the refusal as its own outcome.
    let line = gw.request_line(r.header("x-cognigate-request-id").unwrap());
    assert_eq!(line["outcome"], "refusal_applied", "{line}");
    assert_eq!(line["attempts"][0]["refusal"], true, "{line}");
    assert!(line["attempts"][1].get("refusal").is_none(), "{line}");
    // The refusal was a served answer as far as health goes: m1 serves the next request.
    let r = chat(&t, "guarded", &[]);
    assert_eq!(
        (r.header("x-cognigate-model"), policy(&r)),
        (Some("m1"), None)
    );
}

#[test]
fn with_the_opt_out_header_the_refusal_comes_back_with_unavailable() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "refusal-off");
    refuse_once(&mock, "m1", content_filter());
    let r = chat(&t, "guarded", &[("x-cognigate-policy-fallback", "off")]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(policy(&r), Some("unavailable"));
    assert_eq!(r.header("x-cognigate-model"), Some("m1"));
    assert_eq!(r.json()["choices"][0]["finish_reason"], "content_filter");
    assert_eq!(mock.count(), 1, "no second call");
    let line = gw.request_line(r.header("x-cognigate-request-id").unwrap());
    assert_eq!(line["outcome"], "refusal_unavailable", "{line}");
}

#[test]
fn a_fallback_that_refuses_too_returns_the_original_refusal_with_unavailable_and_charges_both() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "refusal-twice");
    refuse_once(&mock, "m1", content_filter());
    refuse_once(&mock, "m2", content_filter());
    let r = chat(&t, "guarded", &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(policy(&r), Some("unavailable"));
    assert_eq!(r.header("x-cognigate-model"), Some("m1"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("0"));
    assert_eq!(mock.count(), 2);
    // 5 tokens at $1 and 5 at $2 per million.
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert_eq!(rec["served_model"], "m1");
    assert!(
        (rec["cost_usd"].as_f64().unwrap() - 0.000015).abs() < 1e-12,
        "{rec}"
    );
}

#[test]
fn the_fallback_applies_on_v1_messages_and_v1_responses_too() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "refusal-surfaces");
    refuse_once(&mock, "m1", content_filter());
    let body = json!({"model": "guarded", "max_tokens": 20,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/messages", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(policy(&r), Some("applied"));
    assert_eq!(r.header("x-cognigate-model"), Some("m2"));
    assert_eq!(r.json()["type"], "message", "{}", r.text);
    refuse_once(&mock, "m1", content_filter());
    let r = t.post_with(
        "/v1/responses",
        &json!({"model": "guarded", "input": "hi"}),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(policy(&r), Some("applied"));
    assert_eq!(r.header("x-cognigate-model"), Some("m2"));
}

#[test]
fn an_anthropic_providers_refusal_stop_reason_falls_back_to_the_next_candidate() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "refusal-ant");
    let ant = anthropic_claude(&t, "refusal-ant-up");
    let rule = json!({"match": "careful", "chain": ["claude", "m2"], "on_refusal": "fallback"});
    t.put_ok("/routing-rules", rule);
    ant.set_default(stop_refusal());
    let r = chat(&t, "careful", &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(policy(&r), Some("applied"));
    assert_eq!(r.header("x-cognigate-model"), Some("m2"));
    let body = json!({"model": "careful", "max_tokens": 20,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/messages", &body, &[]);
    assert_eq!((r.status, policy(&r)), (200, Some("applied")), "{}", r.text);
    assert_eq!(mock.count(), 2);
}

#[test]
fn with_no_next_candidate_the_refusal_comes_back_with_unavailable_and_a_stream_never_shows_it() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "refusal-solo");
    refuse_once(&mock, "m1", content_filter());
    let r = chat(&t, "solo", &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(policy(&r), Some("unavailable"));
    assert_eq!(r.header("x-cognigate-model"), Some("m1"));
    assert_eq!(r.json()["choices"][0]["finish_reason"], "content_filter");
    assert_eq!(mock.count(), 1);
    // The refusal is charged like any served answer: 5 tokens at $1 per million.
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert!(
        (rec["cost_usd"].as_f64().unwrap() - 0.000005).abs() < 1e-12,
        "{rec}"
    );
    // On /v1/messages too, in Anthropic's shape.
    refuse_once(&mock, "m1", content_filter());
    let body = json!({"model": "solo", "max_tokens": 20,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/messages", &body, &[]);
    assert_eq!(
        (r.status, policy(&r)),
        (200, Some("unavailable")),
        "{}",
        r.text
    );
    assert_eq!(r.json()["type"], "message", "{}", r.text);
    // Streams are out of scope: a streamed refusal passes through, without the header.
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m1",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter"}]});
    let stream = Reply::stream(vec![
        Step::Data(chunk.to_string()),
        Step::Raw("data: [DONE]\n\n".into()),
    ]);
    refuse_once(&mock, "m1", stream);
    let body = json!({"model": "solo", "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/chat/completions", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("content_filter"), "{}", r.text);
    assert_eq!(policy(&r), None);
}

#[test]
fn a_name_without_on_refusal_never_shows_the_header() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "refusal-none");
    // The same refusal under a name with `on_refusal: fallback` says so...
    refuse_once(&mock, "m1", content_filter());
    assert_eq!(policy(&chat(&t, "solo", &[])), Some("unavailable"));
    // ...and under names without it (the model itself, a rule), it is just the answer.
    for name in ["m1", "plain"] {
        refuse_once(&mock, "m1", content_filter());
        let r = chat(&t, name, &[("x-cognigate-policy-fallback", "off")]);
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.json()["choices"][0]["finish_reason"], "content_filter");
        assert_eq!(
            (r.header("x-cognigate-model"), policy(&r)),
            (Some("m1"), None)
        );
    }
    // A normal answer under the fallback name has no header either.
    assert_eq!(policy(&chat(&t, "solo", &[])), None);
    assert_eq!(mock.count(), 4, "nothing was sent twice");
}

#[test]
fn an_anthropic_providers_stop_reason_refusal_is_seen_on_every_surface() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "refusal-ant-solo");
    let ant = anthropic_claude(&t, "refusal-ant-solo-up");
    // A one-entry rule: no next candidate, so the refusal is seen and comes back.
    t.put_ok(
        "/routing-rules",
        json!({"match": "claude-only", "chain": ["claude"], "on_refusal": "fallback"}),
    );
    ant.set_default(stop_refusal());
    let r = chat(&t, "claude-only", &[]);
    assert_eq!(
        (r.status, policy(&r)),
        (200, Some("unavailable")),
        "{}",
        r.text
    );
    assert_eq!(r.json()["choices"][0]["finish_reason"], "content_filter");
    let body = json!({"model": "claude-only", "max_tokens": 20,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/messages", &body, &[]);
    assert_eq!(
        (r.status, policy(&r)),
        (200, Some("unavailable")),
        "{}",
        r.text
    );
    assert_eq!(
        r.json()["stop_reason"],
        "refusal",
        "passed to a Messages caller as sent"
    );
    let r = t.post_with(
        "/v1/responses",
        &json!({"model": "claude-only", "input": "hi"}),
        &[],
    );
    assert_eq!(
        (r.status, policy(&r)),
        (200, Some("unavailable")),
        "{}",
        r.text
    );
    assert_eq!(ant.count(), 3);
}

#[test]
fn an_alias_requested_on_its_own_falls_back_to_its_runner_up_after_a_refusal_only() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "refusal-alias");
    refuse_once(&mock, "m1", content_filter());
    let r = chat(&t, "safe", &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(policy(&r), Some("applied"));
    assert_eq!(r.header("x-cognigate-model"), Some("m2"));
    assert_eq!(mock.count(), 2);
    // The runner-up is for a refusal only: a failure of the alias's one candidate is still the
    // 502 a one-candidate chain gives, with no call to m2.
    mock.push(Rule::any(Reply::status(500)).model("m1").times(1));
    let r = chat(&t, "safe", &[]);
    assert_eq!(r.status, 502, "{}", r.text);
    assert_eq!(mock.count(), 3);
}
