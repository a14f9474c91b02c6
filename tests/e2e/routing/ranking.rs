//! Ranked aliases and the `auto` names, end to end: the built worker on one workerd
//! isolate (so its own outcomes are its stats) against mocks with scripted latencies and
//! failures. Every tenant sets `exploration_share: 0`, so its order is the ranking's alone.

use crate::support::gateway::{Gateway, Resp, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};

/// A tenant with models m1 (price 1) and m2 (price 2) on one mock, exploration off.
fn two_models<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).expect("mock");
    let t = gw.tenant(hint);
    t.provider("p", &mock.url(), &["sk-1"], "round_robin");
    t.model("m1", "p", 1.0, 8000);
    t.model("m2", "p", 2.0, 8000);
    t.put_ok("/settings", json!({"exploration_share": 0}));
    (t, mock)
}

/// m1 answers in 300 ms, m2 in 10 ms.
fn latencies(mock: &MockProvider) {
    mock.push(Rule::any(Reply::ok().delay(300)).model("m1"));
    mock.push(Rule::any(Reply::ok().delay(10)).model("m2"));
}

fn served(r: &Resp) -> String {
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-cognigate-model").unwrap_or_default().to_owned()
}

fn calls_to(mock: &MockProvider, model: &str) -> usize {
    mock.calls()
        .iter()
        .filter(|c| c.model.as_deref() == Some(model))
        .count()
}

#[test]
fn an_alias_ranked_by_latency_serves_the_fast_model_once_stats_exist_and_a_price_alias_is_unchanged(
) {
    let gw = Gateway::shared();
    let (t, mock) = two_models(gw, "rank-latency");
    latencies(&mock);
    let r = t.put_ok(
        "/aliases/quick",
        json!({"capabilities": ["chat"], "rank_by": "latency"}),
    );
    assert_eq!(r.json()["rank_by"], "latency", "shown back: {}", r.text);
    let shown = gw.admin("GET", &t.path("/aliases/quick"), None).json();
    assert_eq!(shown["rank_by"], "latency");
    let by_latency: Vec<String> = (0..20).map(|_| served(&t.chat("quick"))).collect();
    let first_m2 = by_latency.iter().position(|m| m == "m2");
    let first_m2 = first_m2.unwrap_or_else(|| panic!("never served by m2: {by_latency:?}"));
    assert!(
        by_latency[first_m2..].iter().all(|m| m == "m2"),
        "once m2 is measured faster it keeps serving: {by_latency:?}"
    );
    // The same tenant's price-ranked alias (`fast`, cheapest) is ranked by price alone: m1,
    // whatever the stats.
    for _ in 0..5 {
        assert_eq!(served(&t.chat("fast")), "m1");
    }
}

#[test]
fn auto_reliable_moves_away_from_a_model_that_fails_half_its_calls() {
    let gw = Gateway::shared();
    let (t, mock) = two_models(gw, "rank-reliable");
    for _ in 0..20 {
        mock.push(Rule::any(Reply::status(500)).model("m1").times(1));
        mock.push(Rule::any(Reply::ok()).model("m1").times(1));
    }
    let models: Vec<String> = (0..20).map(|_| served(&t.chat("auto:reliable"))).collect();
    assert!(
        models[models.len() - 10..].iter().all(|m| m == "m2"),
        "{models:?}"
    );
    // m1 (first by id while nothing is measured) failed once and was not tried again.
    assert!(
        calls_to(&mock, "m1") <= 2,
        "m1 calls: {}",
        calls_to(&mock, "m1")
    );
}

#[test]
fn auto_fast_falls_back_to_the_runner_up_when_the_leader_fails() {
    let gw = Gateway::shared();
    let (t, mock) = two_models(gw, "rank-fast");
    // The mock answers with the first rule that matches: m2 serves three times, then fails once.
    mock.push(Rule::any(Reply::ok().delay(300)).model("m1"));
    mock.push(Rule::any(Reply::ok().delay(10)).model("m2").times(3));
    mock.push(Rule::any(Reply::status(503)).model("m2").times(1));
    mock.push(Rule::any(Reply::ok().delay(10)).model("m2"));
    // Nothing measured: m1 by id; then the untried m2; then m2 leads on latency.
    let warm: Vec<String> = (0..4).map(|_| served(&t.chat("auto:fast"))).collect();
    assert_eq!(warm, ["m1", "m2", "m2", "m2"]);
    // The leader fails: the runner-up serves as the first fallback.
    let r = t.chat("auto:fast");
    assert_eq!(served(&r), "m1", "{:?}", r.headers);
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
}

#[test]
fn auto_rule_serves_that_rules_chain_auto_cheapest_works_in_any_case_and_auto_nope_is_400() {
    let gw = Gateway::shared();
    let (t, _mock) = two_models(gw, "rank-names");
    assert_eq!(t.rule("my-app", &["m2", "m1"]).status, 200);
    assert_eq!(served(&t.chat("auto:my-app")), "m2");
    assert_eq!(served(&t.chat("AUTO:Cheapest")), "m1");
    assert_eq!(served(&t.chat("auto:smart")), "m2");
    let r = t.chat("auto:nope");
    assert_eq!(r.status, 400, "{}", r.text);
    let e = &r.json()["error"];
    assert_eq!(e["code"], "unknown_chain", "{}", r.text);
    assert_eq!(e["type"], "invalid_request_error");
    assert_eq!(e["param"], "model");
    // Anthropic's token counting takes the same names.
    let body = json!({"model": "auto:fast", "messages": [{"role": "user", "content": "hi"}]});
    let r = gw.request(
        "POST",
        "/v1/messages/count_tokens",
        Some(&t.key),
        Some(&body.to_string()),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

fn listed(gw: &Gateway, key: &str) -> Vec<String> {
    let r = gw.request("GET", "/v1/models", Some(key), None);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["id"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn v1_models_lists_the_auto_names_and_a_scoped_key_ranks_only_what_it_may_use() {
    let gw = Gateway::shared();
    let (t, _mock) = two_models(gw, "rank-list");
    assert_eq!(t.rule("my-app", &["m2"]).status, 200);
    let all = listed(gw, &t.key);
    for name in [
        "auto",
        "auto:balanced",
        "auto:fast",
        "auto:cheap",
        "auto:smart",
        "auto:reliable",
        "auto:my-app",
    ] {
        assert!(all.iter().any(|n| n == name), "{name} in {all:?}");
    }
    // A scoped key sees and calls only the names it lists, `auto` names included.
    let (_, scoped) = t.key_with(json!({"name": "only-m1", "models": ["m1", "auto:smart"]}));
    assert_eq!(listed(gw, &scoped), ["m1", "auto:smart"]);
    let chat = |key: &str, model: &str| {
        let body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
        gw.request(
            "POST",
            "/v1/chat/completions",
            Some(key),
            Some(&body.to_string()),
        )
    };
    // auto:smart prefers the dearer m2, but this key may use m1 only.
    assert_eq!(served(&chat(&scoped, "auto:smart")), "m1");
    for unlisted in ["auto:my-app", "auto:fast", "auto"] {
        let r = chat(&scoped, unlisted);
        assert_eq!(r.status, 403, "{unlisted}: {}", r.text);
    }
    // A key that may use no model gets 403 model_not_allowed from the strategies.
    let (_, alias_only) = t.key_with(json!({"name": "alias-only", "models": ["fast", "auto"]}));
    let r = chat(&alias_only, "auto");
    assert_eq!(r.status, 403, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("model_not_allowed"));
    assert_eq!(r.json()["error"]["param"], "model");
}

fn refused(r: &Resp, field: &str) {
    assert_eq!(r.status, 400, "{}", r.text);
    let e: &Value = &r.json()["error"];
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with(&format!("{field}: ")),
        "{}",
        r.text
    );
    assert_eq!(e["param"], field, "{}", r.text);
}

#[test]
fn admin_writes_refuse_the_reserved_auto_names_in_any_case() {
    let gw = Gateway::shared();
    let (t, _mock) = two_models(gw, "rank-reserved");
    let model = json!({"provider": "p", "context_window": 8000});
    refused(&t.put("/models/auto", model.clone()), "id");
    refused(&t.put("/models/Auto:x", model), "id");
    refused(
        &t.put("/aliases/AUTO", json!({"capabilities": ["chat"]})),
        "name",
    );
    refused(&t.put("/aliases/auto:fast", json!({})), "name");
    refused(&t.rule("auto:Fast", &["m1"]), "match");
    let r = t.put(
        "/aliases/scored",
        json!({"rank_by": "score", "weights": {"success": -1}}),
    );
    refused(&r, "weights.success");
    let r = t.put("/settings", json!({"exploration_share": 2}));
    refused(&r, "exploration_share");
}
