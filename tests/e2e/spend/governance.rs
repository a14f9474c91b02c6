//! Governance, end to end: the official `openai` Python SDK drives the built worker
//! on workerd against the mock; "no upstream call" is the mock's own count.

use crate::support::gateway::{eventually, Gateway, Tenant};
use crate::support::sdk::python;
use cognigate::mock::{MockProvider, Reply};
use serde_json::{json, Value};
use std::time::Duration;

/// Ledger settling (immediate for limited requests) and the roll-up flush both run after the
/// answer; the issue allows a served request 10 s to show up.
const SETTLED: Duration = Duration::from_secs(10);

fn sdk(gw: &Gateway, key: &str, scenario: &str, options: Value) -> Value {
    let base = format!("{}/v1", gw.url);
    let options = options.to_string();
    python("governance_sdk.py", &[&base, key, scenario, &options])
}

fn chat(t: &Tenant<'_>, key: &str, options: Value) -> Value {
    sdk(t.gw, key, "chat", options)
}

fn code(v: &Value) -> &str {
    v["body"]["code"].as_str().unwrap_or_default()
}

/// A tenant whose model `m` costs $100 per million tokens each way on a fresh mock: one mock
/// answer (5 + 7 tokens) costs $0.0012.
fn priced<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider) {
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1"], "round_robin");
    t.model("m", "p", 100.0, 8000);
    (t, mock)
}

#[test]
fn a_scoped_key_gets_403_for_an_unlisted_name_with_zero_upstream_calls() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("scoped", &["sk-1"], "round_robin");
    let (id, key) = t.key_with(json!({"name": "ci-bot", "models": ["m"]}));
    let refused = chat(&t, &key, json!({"model": "fast"}));
    assert_eq!(refused["status"], 403, "{refused}");
    assert_eq!(refused["body"]["type"], "permission_error");
    assert_eq!(code(&refused), "model_not_allowed");
    assert_eq!(refused["body"]["param"], "model");
    // A name the catalog does not know is refused the same way: the key learns nothing of it.
    assert_eq!(
        code(&chat(&t, &key, json!({"model": "no-such-model"}))),
        "model_not_allowed"
    );
    assert_eq!(mock.count(), 0, "no upstream call");
    assert_eq!(chat(&t, &key, json!({"model": "m"}))["status"], 200);
    assert_eq!(mock.count(), 1);
    // Cleared by PATCH: every name is allowed again, at once in this isolate.
    let r = t.gw.admin(
        "PATCH",
        &t.path(&format!("/api-keys/{id}")),
        Some(json!({"models": null})),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(chat(&t, &key, json!({"model": "fast"}))["status"], 200);
}

#[test]
fn an_rpm_2_key_gets_429_with_retry_after_on_its_third_request_in_a_minute() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("rpm", &["sk-1"], "round_robin");
    let (_, key) = t.key_with(json!({"rpm": 2}));
    assert_eq!(chat(&t, &key, json!({"model": "m"}))["status"], 200);
    assert_eq!(chat(&t, &key, json!({"model": "m"}))["status"], 200);
    let third = chat(&t, &key, json!({"model": "m"}));
    assert_eq!(third["status"], 429, "{third}");
    assert_eq!(code(&third), "rate_limit_exceeded");
    let secs: u64 = third["retry_after"].as_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&secs), "Retry-After {secs}");
    assert_eq!(mock.count(), 2, "the third request made no upstream call");
    // The tenant's other key is not limited by it.
    assert_eq!(chat(&t, &t.key, json!({"model": "m"}))["status"], 200);
}

#[test]
fn a_key_with_a_tiny_budget_and_a_priced_model_gets_402_once_spent() {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "budget");
    let (id, key) = t.key_with(json!({"budget": {"usd": 0.001, "period": "day"}}));
    let first = chat(&t, &key, json!({"model": "m"}));
    assert_eq!(first["status"], 200, "{first}");
    let mut refused = Value::Null;
    eventually("the budget to be spent", SETTLED, || {
        refused = chat(&t, &key, json!({"model": "m"}));
        refused["status"] == 402
    });
    assert_eq!(code(&refused), "budget_exceeded");
    let calls = mock.count();
    assert_eq!(chat(&t, &key, json!({"model": "m"}))["status"], 402);
    assert_eq!(
        mock.count(),
        calls,
        "a refused request makes no upstream call"
    );
    let keys = t.gw.admin("GET", &t.path("/api-keys"), None).json();
    let row = keys["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["spend"]["period"], "day");
    assert!(row["spend"]["usd"].as_f64().unwrap() >= 0.0012, "{row}");
}

#[test]
fn a_tenant_budget_blocks_every_key() {
    let gw = Gateway::shared();
    let (t, _mock) = priced(gw, "tenant-budget");
    t.put_ok(
        "/settings",
        json!({"budget": {"usd": 0.001, "period": "month"}}),
    );
    let (_, other) = t.key_with(json!({}));
    assert_eq!(chat(&t, &t.key, json!({"model": "m"}))["status"], 200);
    for key in [&t.key, &other] {
        let mut refused = Value::Null;
        eventually("the tenant budget to be spent", SETTLED, || {
            refused = chat(&t, key, json!({"model": "m"}));
            refused["status"] == 402
        });
        assert_eq!(code(&refused), "tenant_budget_exceeded");
    }
}

#[test]
fn two_end_users_with_a_budget_are_limited_separately() {
    let gw = Gateway::shared();
    let (t, _mock) = priced(gw, "end-users");
    t.put_ok(
        "/settings",
        json!({"end_user": {"budget": {"usd": 0.001, "period": "total"}}}),
    );
    // Alice is named by the header, Bob by the body's `user`.
    assert_eq!(
        chat(&t, &t.key, json!({"model": "m", "end_user": "alice"}))["status"],
        200
    );
    let mut refused = Value::Null;
    eventually("alice's budget to be spent", SETTLED, || {
        refused = chat(
            &t,
            &t.key,
            json!({"model": "m", "end_user": "alice", "user": "bob"}),
        );
        refused["status"] == 402
    });
    assert_eq!(code(&refused), "end_user_budget_exceeded");
    assert_eq!(
        chat(&t, &t.key, json!({"model": "m", "user": "bob"}))["status"],
        200
    );
    // A request naming no end user is not held to a per-user limit.
    assert_eq!(chat(&t, &t.key, json!({"model": "m"}))["status"], 200);
}

#[test]
fn an_end_user_rpm_limits_that_user_only() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("end-user-rpm", &["sk-1"], "round_robin");
    t.put_ok("/settings", json!({"end_user": {"rpm": 1}}));
    assert_eq!(
        chat(&t, &t.key, json!({"model": "m", "user": "carol"}))["status"],
        200
    );
    let second = chat(&t, &t.key, json!({"model": "m", "user": "carol"}));
    assert_eq!(
        (second["status"].as_u64(), code(&second)),
        (Some(429), "rate_limit_exceeded")
    );
    assert!(second["retry_after"].as_str().is_some());
    assert_eq!(
        chat(&t, &t.key, json!({"model": "m", "user": "dave"}))["status"],
        200
    );
    assert_eq!(mock.count(), 2);
}

#[test]
fn usage_grouped_by_model_after_a_fallback_shows_the_serving_model() {
    let gw = Gateway::shared();
    let (t, _mock) = priced(gw, "usage-fallback");
    let down = MockProvider::start("down").unwrap();
    down.set_default(Reply::status(500));
    t.provider("broken", &down.url(), &["sk-down"], "round_robin");
    t.model("down", "broken", 1.0, 8000);
    assert_eq!(t.rule("chain", &["down", "m"]).status, 200);
    let served = chat(&t, &t.key, json!({"model": "chain"}));
    assert_eq!(served["model"], "m", "{served}");
    // Everything failing is a request with zero cost and no serving model.
    assert_eq!(chat(&t, &t.key, json!({"model": "down"}))["status"], 502);
    let mut by_model = Value::Null;
    eventually("both requests in the usage API", SETTLED, || {
        by_model = t.usage("model");
        by_model["total"]["requests"] == 2
    });
    let groups = by_model["data"].as_array().unwrap();
    let m = groups
        .iter()
        .find(|g| g["group"] == "m")
        .expect("served by m");
    assert_eq!(
        (m["requests"].as_u64(), m["prompt_tokens"].as_u64()),
        (Some(1), Some(5))
    );
    assert!(
        (m["cost_usd"].as_f64().unwrap() - 0.0012).abs() < 1e-9,
        "{m}"
    );
    let failed = groups
        .iter()
        .find(|g| g["group"].is_null())
        .expect("the exhausted request");
    assert_eq!(
        (failed["requests"].as_u64(), failed["cost_usd"].as_f64()),
        (Some(1), Some(0.0))
    );
    assert!(groups.iter().all(|g| g["group"] != "down"));
    let by_key = t.usage("key");
    assert_eq!(by_key["data"].as_array().unwrap().len(), 1);
}

#[test]
fn a_streamed_requests_usage_is_recorded_and_the_usage_chunk_is_stripped_when_not_asked_for() {
    let gw = Gateway::shared();
    let (t, _mock) = priced(gw, "stream-usage");
    let plain = sdk(t.gw, &t.key, "stream", json!({"model": "m"}));
    assert_eq!(plain["chunks_with_usage"], 0, "{plain}");
    assert!(!plain["text"].as_str().unwrap().is_empty());
    let asked = sdk(
        t.gw,
        &t.key,
        "stream",
        json!({"model": "m", "include_usage": true}),
    );
    assert_eq!(
        (asked["chunks_with_usage"].as_u64(), asked["usage"].as_u64()),
        (Some(1), Some(12))
    );
    let mut by_model = Value::Null;
    eventually("both streams in the usage API", SETTLED, || {
        by_model = t.usage("model");
        by_model["total"]["requests"] == 2
    });
    assert_eq!(by_model["total"]["prompt_tokens"], 10);
    assert_eq!(by_model["total"]["completion_tokens"], 14);
}

#[test]
fn a_request_without_model_is_served_by_default_model() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("default-model", &["sk-1"], "round_robin");
    let missing = chat(&t, &t.key, json!({"model": null}));
    assert_eq!(
        (missing["status"].as_u64(), code(&missing)),
        (Some(400), "missing_model")
    );
    t.put_ok("/settings", json!({"default_model": "m"}));
    let served = chat(&t, &t.key, json!({"model": null}));
    assert_eq!(
        (served["status"].as_u64(), served["model"].as_str()),
        (Some(200), Some("m"))
    );
    assert_eq!(mock.count(), 1);
    // The default is a requested name like any other: an allow-list applies to it.
    let (_, scoped) = t.key_with(json!({"models": ["fast"]}));
    assert_eq!(
        code(&chat(&t, &scoped, json!({"model": null}))),
        "model_not_allowed"
    );
}

/// The debug counter of Durable Object calls a warm request made.
fn do_calls(t: &Tenant<'_>, key: &str) -> u64 {
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).to_string();
    let r =
        t.gw.request("POST", "/v1/chat/completions", Some(key), Some(&body));
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-cognigate-do-calls").unwrap().parse().unwrap()
}

#[test]
fn a_tenant_without_limits_pays_no_extra_round_trip_and_a_warm_limited_key_with_a_live_slice_pays_none(
) {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("round-trips", &["sk-1"], "round_robin");
    let (_, limited) =
        t.key_with(json!({"rpm": 100000, "budget": {"usd": 1000, "period": "month"}}));
    // Warm: the routing grant is held, the configs are cached; the limited key's first request
    // asked the ledger, which granted this isolate a slice (renewed in the background).
    for _ in 0..3 {
        do_calls(&t, &t.key);
        do_calls(&t, &limited);
    }
    assert_eq!(do_calls(&t, &t.key), 0);
    assert_eq!(do_calls(&t, &limited), 0);
}
