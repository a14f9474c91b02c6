//! `GET /admin/v1/tenants/{t}/explain` end to end: a dry run of a name's chain that
//! calls no upstream and agrees with the request made just after it.

use crate::support::gateway::{eventually, Gateway, Resp, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::Duration;

fn explain(t: &Tenant<'_>, query: &str) -> Resp {
    t.gw.admin("GET", &t.path(&format!("/explain?{query}")), None)
}

fn explained(t: &Tenant<'_>, query: &str) -> Value {
    let r = explain(t, query);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()
}

#[test]
fn explain_lists_an_open_breakers_position_as_skipped_with_its_breaker_until_and_a_request_agrees()
{
    let gw = Gateway::shared();
    let main = MockProvider::start("explain-main").unwrap();
    let backup = MockProvider::start("explain-backup").unwrap();
    let t = gw.tenant("explain");
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": 60000}}),
    );
    t.provider("p", &main.url(), &["sk-main"], "failover");
    t.provider("b", &backup.url(), &["sk-backup"], "failover");
    t.model("flaky", "p", 1.0, 8000);
    t.model("backup", "b", 1.0, 8000);
    assert_eq!(t.rule("chain", &["flaky", "backup"]).status, 200);
    // Before any failure both positions would be tried.
    let calm = explained(&t, "model=chain");
    let decisions: Vec<&Value> = calm["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["decision"])
        .collect();
    assert_eq!(decisions, [&json!("try"), &json!("try")], "{calm}");
    main.push(Rule::any(Reply::status(503)).model("flaky").times(5));
    for _ in 0..5 {
        assert_eq!(t.chat("flaky").status, 502);
    }
    let health = t.gw.request("GET", "/v1/health", Some(&t.key), None).json();
    let breaker_until = health["breakers"][0]["breaker_until"].clone();
    assert!(breaker_until.is_u64(), "{health}");

    let out = explained(&t, "model=chain");
    assert_eq!(out["model"], "chain");
    assert_eq!(
        out["candidates"],
        json!([
            {"position": 0, "model": "flaky", "provider": "p", "decision": "skip",
             "reason": "breaker_open", "until": breaker_until, "breaker_until": breaker_until,
             "score": null, "stats": null, "effective_price_per_mtok": 2.0, "cached_share": null},
            {"position": 1, "model": "backup", "provider": "b", "decision": "try",
             "reason": null, "until": null, "breaker_until": null, "score": null, "stats": null,
             "effective_price_per_mtok": 2.0, "cached_share": null},
        ]),
        "{out}"
    );
    assert_eq!(
        (main.count(), backup.count()),
        (5, 0),
        "a dry run calls no upstream"
    );
    // Explaining changed nothing: the same answer again, and the breaker's end as it was.
    assert_eq!(
        explained(&t, "model=chain")["candidates"],
        out["candidates"]
    );
    let r = t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("backup"));
    assert_eq!(
        (main.count(), backup.count()),
        (5, 1),
        "the skipped position"
    );
}

#[test]
fn explaining_a_half_open_breaker_claims_no_probe_so_the_next_request_is_the_probe() {
    let gw = Gateway::shared();
    let main = MockProvider::start("explain-probe").unwrap();
    let backup = MockProvider::start("explain-probe-b").unwrap();
    let t = gw.tenant("explain-probe");
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": 1000}}),
    );
    t.provider("p", &main.url(), &["sk-main"], "failover");
    t.provider("b", &backup.url(), &["sk-backup"], "failover");
    t.model("flaky", "p", 1.0, 8000);
    t.model("backup", "b", 1.0, 8000);
    assert_eq!(t.rule("chain", &["flaky", "backup"]).status, 200);
    main.push(Rule::any(Reply::status(503)).model("flaky").times(5));
    for _ in 0..5 {
        assert_eq!(t.chat("flaky").status, 502);
    }
    eventually("the open duration to end", Duration::from_secs(10), || {
        let health = t.gw.request("GET", "/v1/health", Some(&t.key), None).json();
        health["breakers"][0]["state"] == "half_open"
    });
    // Had a dry run claimed the one probe, the request below would skip `flaky`.
    for _ in 0..3 {
        let first = &explained(&t, "model=chain")["candidates"][0];
        assert_eq!(
            (&first["model"], &first["decision"], &first["breaker_until"]),
            (&json!("flaky"), &json!("try"), &Value::Null),
            "{first}"
        );
    }
    let r = t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.header("x-cognigate-model"),
        Some("flaky"),
        "the request was the probe"
    );
    assert_eq!(backup.count(), 0);
}

#[test]
fn explain_routes_a_conditional_rule_by_the_facts_in_its_query() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("explain-facts", &["sk-1"], "failover");
    for m in ["m-tools", "m-search"] {
        t.model(m, "p", 1.0, 8000);
    }
    t.put_ok(
        "/routing-rules",
        json!({"name": "a-tools", "match": "m", "when": {"params.tools": true}, "chain": ["m-tools"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "b-team", "match": "m", "when": {"metadata.team": "search"}, "chain": ["m-search"]}),
    );
    let model = |q: &str| explained(&t, q)["candidates"][0]["model"].clone();
    assert_eq!(model("model=m"), "m", "no rule holds: the model itself");
    assert_eq!(model("model=m&tools=true&stream=true"), "m-tools");
    assert_eq!(
        model("model=m&metadata=%7B%22team%22%3A%22search%22%7D"),
        "m-search"
    );
    let r = t.post_with(
        "/v1/chat/completions",
        &json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        &[("x-cognigate-metadata", r#"{"team":"search"}"#)],
    );
    assert_eq!(
        r.header("x-cognigate-model"),
        Some("m-search"),
        "a request agrees"
    );
    for (query, param) in [
        ("model=m&stream=maybe", "stream"),
        ("model=m&metadata=%5B1%5D", "metadata"),
        ("tools=true", "model"),
    ] {
        let r = explain(&t, query);
        assert_eq!(
            (r.status, r.error_code().as_deref()),
            (400, Some("invalid_request")),
            "{query}: {}",
            r.text
        );
        assert_eq!(r.json()["error"]["param"], param, "{query}");
    }
}

#[test]
fn an_unknown_name_is_404_model_not_found_as_on_the_request_path() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("explain-unknown", &["sk-1"], "failover");
    let asked = explain(&t, "model=nope");
    let requested = t.chat("nope");
    assert_eq!(
        (asked.status, asked.error_code()),
        (404, Some("model_not_found".to_owned())),
        "{}",
        asked.text
    );
    assert_eq!(asked.json()["error"], requested.json()["error"]);
    assert_eq!(explained(&t, "model=m")["candidates"][0]["model"], "m");
}

#[test]
fn a_caller_key_gets_401_from_explain_and_the_admin_key_an_answer() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("explain-auth", &["sk-1"], "failover");
    let path = t.path("/explain?model=m");
    let r = gw.request("GET", &path, Some(&t.key), None);
    assert_eq!(r.status, 401, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("invalid_admin_key"));
    assert_eq!(explained(&t, "model=m")["candidates"][0]["decision"], "try");
}
