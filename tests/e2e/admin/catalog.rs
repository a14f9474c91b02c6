//! Tenants and the catalog on D1; resolution and chains through the real worker.

use super::tables_snapshot;
use crate::support::gateway::Gateway;
use cognigate::mock::MockProvider;
use serde_json::{json, Value};

#[test]
fn a_new_tenant_has_the_four_default_aliases() {
    let gw = Gateway::shared();
    let t = gw.tenant("defaults");
    let r = gw.admin("GET", &t.path("/aliases"), None);
    assert_eq!(r.status, 200);
    let aliases: Vec<Value> = r.json()["data"].as_array().unwrap().clone();
    let by_name = |n: &str| aliases.iter().find(|a| a["name"] == n).cloned().unwrap();
    assert_eq!(aliases.len(), 4);
    assert_eq!(by_name("fast")["cost_tier"], "cheapest");
    assert_eq!(by_name("fast")["capabilities"], json!(["chat"]));
    assert_eq!(by_name("balanced")["min_context_window"], 32000);
    assert_eq!(by_name("balanced")["cost_tier"], "balanced");
    assert_eq!(by_name("best")["cost_tier"], "best");
    assert_eq!(by_name("long")["min_context_window"], 128000);
    assert_eq!(by_name("long")["cost_tier"], "balanced");
}

#[test]
fn duplicate_tenant_is_409_and_changes_nothing() {
    let gw = Gateway::shared();
    let t = gw.tenant("dup");
    let before = tables_snapshot(gw, &t.id);
    let r = gw.admin(
        "POST",
        "/admin/v1/tenants",
        Some(json!({"id": t.id, "name": "Other"})),
    );
    assert_eq!(r.status, 409, "{}", r.text);
    assert_eq!(tables_snapshot(gw, &t.id), before);
}

#[test]
fn a_chat_request_goes_through_an_alias_to_the_cheapest_model() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("alias").unwrap();
    let t = gw.tenant("alias");
    t.provider("mock", &mock.url(), &["sk-1"], "failover");
    t.model("pricey", "mock", 9.0, 200_000);
    t.model("meta-llama/Llama-3.3-70B", "mock", 0.5, 128_000);
    t.model("tiny", "mock", 0.1, 8_000);
    // `long` needs 128k: tiny is out, the Llama model is cheapest of the rest.
    let r = t.chat("long");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.header("x-cognigate-model"),
        Some("meta-llama/Llama-3.3-70B")
    );
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("0"));
    assert_eq!(
        mock.calls()[0].model.as_deref(),
        Some("meta-llama/Llama-3.3-70B")
    );
    // `best` is the most expensive; `fast` the cheapest.
    assert_eq!(t.chat("best").header("x-cognigate-model"), Some("pricey"));
    assert_eq!(t.chat("fast").header("x-cognigate-model"), Some("tiny"));
    // Model ids with '/' work in requests as-is and in admin paths percent-encoded.
    assert_eq!(t.chat("meta-llama/Llama-3.3-70B").status, 200);
    let r = gw.admin("GET", &t.path("/models/meta-llama%2FLlama-3.3-70B"), None);
    assert_eq!(r.json()["id"], "meta-llama/Llama-3.3-70B");
}

#[test]
fn a_rule_chains_models_and_aliases_and_reports_dead_entries_as_warnings() {
    let gw = Gateway::shared();
    let a = MockProvider::start("a").unwrap();
    let t = gw.tenant("rule");
    t.provider("a", &a.url(), &["sk-a"], "failover");
    t.model("primary", "a", 5.0, 128_000);
    t.model("cheap", "a", 0.1, 8_000);
    let r = t.rule("my-app", &["retired-model", "primary", "fast"]);
    assert_eq!(r.status, 200, "{}", r.text);
    let warnings = r.json()["warnings"].as_array().unwrap().clone();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].as_str().unwrap().contains("retired-model"));
    let r = t.chat("my-app");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("primary"));
    let listed = gw.admin("GET", &t.path("/routing-rules"), None);
    assert_eq!(
        listed.json()["data"][0]["chain"],
        json!(["retired-model", "primary", "fast"])
    );
    assert_eq!(
        gw.admin("DELETE", &t.path("/routing-rules/my-app"), None)
            .status,
        200
    );
    assert_eq!(
        t.chat("my-app").error_code().as_deref(),
        Some("model_not_found")
    );
}

#[test]
fn a_chain_longer_than_max_fallback_depth_is_refused_when_written() {
    let gw = Gateway::shared();
    let t = gw.tenant("longchain");
    let before = tables_snapshot(gw, &t.id);
    let r = t.rule("x", &["a", "b", "c", "d", "e", "f"]);
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 5"),
        "{}",
        r.text
    );
    assert_eq!(t.rule("x", &[]).status, 400);
    assert_eq!(tables_snapshot(gw, &t.id), before);
    // The tenant's own limit applies, and cannot be lowered below an existing chain.
    assert_eq!(
        t.put("/settings", json!({"max_fallback_depth": 2})).status,
        200
    );
    assert_eq!(t.rule("x", &["a", "b", "c"]).status, 400);
    assert_eq!(t.rule("x", &["a", "b"]).status, 200);
    let r = t.put("/settings", json!({"max_fallback_depth": 1}));
    assert_eq!(r.status, 400);
    assert!(r.text.contains("'x'"), "{}", r.text);
}

#[test]
fn unknown_name_is_404_and_a_known_name_with_no_candidate_is_503() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("nc").unwrap();
    let t = gw.tenant("nocand");
    t.provider("mock", &mock.url(), &["sk-1"], "failover");
    t.model("small", "mock", 1.0, 8_000);
    let r = t.chat("no-such-model");
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (404, Some("model_not_found"))
    );
    let r = t.chat("long");
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (503, Some("no_candidates"))
    );
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("min_context_window 128000"),
        "{}",
        r.text
    );
    assert_eq!(mock.count(), 0);
}

#[test]
fn alias_and_model_names_cannot_collide() {
    let gw = Gateway::shared();
    let t = gw.tenant("collide");
    t.provider("p", "http://127.0.0.1:9/v1", &["sk"], "failover");
    let r = t.put(
        "/models/fast",
        json!({"provider": "p", "context_window": 8000}),
    );
    assert_eq!(r.status, 409, "fast is a default alias: {}", r.text);
    t.model("gpt-4o", "p", 1.0, 8000);
    let r = t.put("/aliases/gpt-4o", json!({"cost_tier": "best"}));
    assert_eq!(r.status, 409, "{}", r.text);
    let r = t.put(
        "/models/m",
        json!({"provider": "missing", "context_window": 8000}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.json()["error"]["param"], "provider");
}

#[test]
fn a_warm_chat_request_makes_zero_d1_queries() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("warm").unwrap();
    let t = gw.tenant("warm");
    t.provider("mock", &mock.url(), &["sk-1"], "failover");
    t.model("m", "mock", 1.0, 8000);
    let cold = t.chat("m");
    assert_eq!(cold.status, 200);
    assert!(
        cold.header("x-cognigate-d1-queries")
            .unwrap()
            .parse::<u32>()
            .unwrap()
            >= 1
    );
    for _ in 0..3 {
        let warm = t.chat("m");
        assert_eq!(warm.header("x-cognigate-d1-queries"), Some("0"));
        // Grants are the default (ROUTING_LEASE_MS): at most one routing-object round trip.
        let do_calls: u32 = warm
            .header("x-cognigate-do-calls")
            .unwrap()
            .parse()
            .unwrap();
        assert!(do_calls <= 1, "{do_calls}");
    }
    // An admin write invalidates this isolate's copy: the next request sees the new model.
    t.model("m2", "mock", 1.0, 8000);
    assert_eq!(t.chat("m2").status, 200);
}

#[test]
fn deleting_a_tenant_removes_everything_it_owns() {
    let gw = Gateway::shared();
    let t = gw.tenant("gone");
    t.provider("p", "http://127.0.0.1:9/v1", &["sk"], "failover");
    t.model("m", "p", 1.0, 8000);
    t.rule("r", &["m"]);
    assert_eq!(gw.admin("DELETE", &t.path(""), None).status, 200);
    assert!(tables_snapshot(gw, &t.id).is_empty());
    assert_eq!(gw.admin("GET", &t.path(""), None).status, 404);
    assert_eq!(t.chat("m").status, 401, "its caller keys died with it");
}

#[test]
fn a_provider_in_use_cannot_be_deleted() {
    let gw = Gateway::shared();
    let t = gw.tenant("inuse");
    t.provider("p", "http://127.0.0.1:9/v1", &["sk"], "failover");
    t.model("m", "p", 1.0, 8000);
    let r = gw.admin("DELETE", &t.path("/providers/p"), None);
    assert_eq!(r.status, 409, "{}", r.text);
    assert!(
        r.text.contains("'m'") || r.text.contains(": m"),
        "{}",
        r.text
    );
    assert_eq!(gw.admin("DELETE", &t.path("/models/m"), None).status, 200);
    assert_eq!(
        gw.admin("DELETE", &t.path("/providers/p"), None).status,
        200
    );
}

#[test]
fn settings_fall_back_to_vars_and_get_returns_effective_values() {
    let gw = Gateway::shared();
    let t = gw.tenant("settings");
    let r = gw.admin("GET", &t.path("/settings"), None);
    assert_eq!(
        r.json(),
        json!({"max_fallback_depth": 5, "breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": 60000}})
    );
    let r = t.put("/settings", json!({"breaker": {"open_duration_ms": 1000}}));
    assert_eq!(r.json()["breaker"]["open_duration_ms"], 1000);
    assert_eq!(r.json()["breaker"]["error_threshold"], 5);
}
