//! Tenants, catalog and the admin API on D1; resolution and chains through the real worker.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use cognigate::api::route::{example_path, ADMIN_OPERATIONS};
use cognigate::mock::MockProvider;
use serde_json::{json, Value};
use support::gateway::{Gateway, ADMIN_KEY};

fn tables_snapshot(gw: &Gateway, tenant: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for table in [
        "providers",
        "models",
        "aliases",
        "routing_rules",
        "caller_keys",
    ] {
        all.extend(gw.sql(
            &format!("SELECT * FROM {table} WHERE tenant_id = ?1 ORDER BY 1, 2"),
            &[json!(tenant)],
        ));
    }
    all.extend(gw.sql("SELECT * FROM tenants WHERE id = ?1", &[json!(tenant)]));
    all
}

#[test]
fn admin_routes_refuse_a_missing_or_wrong_key() {
    let gw = Gateway::shared();
    for key in [None, Some("wrong"), Some("")] {
        let r = gw.request("GET", "/admin/v1/tenants", key, None);
        assert_eq!(r.status, 401);
        assert_eq!(r.json()["error"]["type"], "authentication_error");
        assert_eq!(r.error_code().as_deref(), Some("invalid_admin_key"));
    }
    let t = gw.tenant("callerkey");
    // A caller key is not an admin key.
    let r = gw.request("GET", "/admin/v1/tenants", Some(&t.key), None);
    assert_eq!(r.status, 401);
}

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
fn caller_keys_are_shown_once_stored_hashed_and_revoked_at_once() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("keys").unwrap();
    let t = gw.tenant("keys");
    t.provider("mock", &mock.url(), &["sk-1"], "failover");
    t.model("m", "mock", 1.0, 8000);
    let r = gw.admin("POST", &t.path("/api-keys"), None);
    let (id, key) = (
        r.json()["id"].as_str().unwrap().to_owned(),
        r.json()["key"].as_str().unwrap().to_owned(),
    );
    assert!(key.starts_with("cg_"));
    let listed = gw.admin("GET", &t.path("/api-keys"), None);
    assert!(
        listed.text.contains(&id) && !listed.text.contains(&key),
        "{}",
        listed.text
    );
    let stored = gw.sql("SELECT * FROM caller_keys WHERE id = ?1", &[json!(id)]);
    assert!(
        !stored[0].to_string().contains(&key),
        "only the hash is stored"
    );

    let chat = |k: &str| {
        gw.request(
            "POST",
            "/v1/chat/completions",
            Some(k),
            Some(r#"{"model":"m"}"#),
        )
    };
    assert_eq!(chat(&key).status, 200);
    assert_eq!(
        gw.admin("DELETE", &t.path(&format!("/api-keys/{id}")), None)
            .status,
        200
    );
    let r = chat(&key);
    assert_eq!(r.status, 401);
    assert_eq!(r.error_code().as_deref(), Some("invalid_api_key"));
    for bad in ["", "cg_unknown"] {
        assert_eq!(chat(bad).status, 401);
    }
    let r = gw.request(
        "POST",
        "/v1/chat/completions",
        None,
        Some(r#"{"model":"m"}"#),
    );
    assert_eq!(r.error_code().as_deref(), Some("invalid_api_key"));
}

#[test]
fn provider_keys_are_shown_only_as_ids_and_last_four() {
    let gw = Gateway::shared();
    let t = gw.tenant("provview");
    t.provider(
        "openai",
        "https://api.openai.com/v1",
        &["sk-secret-material-9876", "sk-short-5"],
        "round_robin",
    );
    let r = gw.admin("GET", &t.path("/providers/openai"), None);
    assert_eq!(r.status, 200);
    assert!(!r.text.contains("secret-material"), "{}", r.text);
    assert_eq!(r.json()["keys"][0]["last4"], "9876");
    // Keys shorter than 16 characters show no last4, never the whole key.
    assert_eq!(r.json()["keys"][1]["last4"], Value::Null, "{}", r.text);
    assert!(
        !r.text.contains("sk-short-5") && !r.text.contains("rt-5"),
        "{}",
        r.text
    );
    assert!(r.json()["keys"][0]["id"]
        .as_str()
        .unwrap()
        .starts_with("key_"));
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
fn tenant_b_cannot_use_or_see_tenant_a_config() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("iso").unwrap();
    let a = gw.tenant("iso-a");
    let b = gw.tenant("iso-b");
    a.provider("shared-name", &mock.url(), &["sk-a"], "failover");
    a.model("a-only-model", "shared-name", 1.0, 8000);
    a.put("/aliases/a-alias", json!({"pin": "a-only-model"}));
    a.rule("a-rule", &["a-only-model"]);
    for name in ["a-only-model", "a-alias", "a-rule"] {
        let r = b.chat(name);
        assert_eq!(r.status, 404, "{name}: {}", r.text);
    }
    let listed = gw.request("GET", "/v1/models", Some(&b.key), None);
    assert_eq!(listed.status, 200);
    assert!(
        !listed.text.contains("a-only-model") && !listed.text.contains("a-alias"),
        "{}",
        listed.text
    );
    let mine = gw.request("GET", "/v1/models", Some(&a.key), None);
    assert!(mine.text.contains("a-only-model") && mine.text.contains("a-alias"));
    assert_eq!(mine.json()["object"], "list");
    assert_eq!(mock.count(), 0);
}

#[test]
fn bad_admin_input_is_refused_with_a_message_and_changes_nothing() {
    let gw = Gateway::shared();
    let t = gw.tenant("badinput");
    t.provider("p", "http://127.0.0.1:9/v1", &["sk"], "failover");
    let before = tables_snapshot(gw, &t.id);
    let long_id = "a".repeat(200);
    let cases: Vec<(&str, String, String, u16, &str)> = vec![
        (
            "PUT",
            t.path("/providers/q"),
            "{not json".into(),
            400,
            "malformed JSON",
        ),
        (
            "PUT",
            t.path("/providers/q"),
            r#"{"kind":"openai","base_url":"http://x","keys":"sk"}"#.into(),
            400,
            "keys",
        ),
        (
            "PUT",
            t.path("/providers/q"),
            r#"{"kind":"openai","base_url":"http://x","keys":["sk"],"extra":1}"#.into(),
            400,
            "unknown field `extra`",
        ),
        (
            "PUT",
            t.path("/providers/q"),
            r#"{"kind":"bogus","base_url":"http://x","keys":["sk"]}"#.into(),
            400,
            "kind",
        ),
        (
            "PUT",
            t.path("/providers/q"),
            r#"{"kind":"openai","base_url":"ftp://x","keys":["sk"]}"#.into(),
            400,
            "base_url",
        ),
        (
            "PUT",
            t.path("/models/m"),
            r#"{"provider":"p","context_window":"big"}"#.into(),
            400,
            "context_window",
        ),
        (
            "PUT",
            t.path("/models/m"),
            r#"{"provider":"p"}"#.into(),
            400,
            "context_window",
        ),
        (
            "PUT",
            t.path(&format!("/models/{long_id}")),
            r#"{"provider":"p","context_window":8}"#.into(),
            400,
            "model id",
        ),
        (
            "PUT",
            t.path("/aliases/x"),
            r#"{"cost_tier":"free"}"#.into(),
            400,
            "cost_tier",
        ),
        (
            "PUT",
            t.path("/aliases/x"),
            r#"{"provider_preference":["p","p"]}"#.into(),
            400,
            "listed twice",
        ),
        (
            "PUT",
            t.path("/settings"),
            r#"{"breaker":{"window_ms":"soon"}}"#.into(),
            400,
            "breaker.window_ms",
        ),
        (
            "PUT",
            t.path("/settings"),
            r#"{"max_fallback_depth":0}"#.into(),
            400,
            "max_fallback_depth",
        ),
        (
            "PUT",
            t.path("/routing-rules"),
            r#"{"match":"x","chain":"fast"}"#.into(),
            400,
            "chain",
        ),
        (
            "PUT",
            t.path("/providers/q"),
            format!(
                r#"{{"kind":"openai","base_url":"http://x","keys":["{}"]}}"#,
                "k".repeat(70_000)
            ),
            413,
            "exceeds",
        ),
    ];
    for (method, path, body, status, needle) in cases {
        let r = gw.request(method, &path, Some(ADMIN_KEY), Some(&body));
        assert_eq!(r.status, status, "{path} {body:.80}: {}", r.text);
        assert!(
            r.text.contains(needle),
            "{path}: expected {needle:?} in {}",
            r.text
        );
        assert!(r.json()["error"]["message"].is_string());
    }
    let r = gw.admin(
        "POST",
        "/admin/v1/tenants",
        Some(json!({"id": long_id, "name": "x"})),
    );
    assert_eq!(r.status, 400);
    assert_eq!(tables_snapshot(gw, &t.id), before, "nothing was written");
}

#[test]
fn every_documented_admin_operation_is_served() {
    let gw = Gateway::shared();
    let r = gw.admin("GET", "/admin/v1/openapi.json", None);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["openapi"], "3.1.0");
    for (method, template) in ADMIN_OPERATIONS {
        let path = example_path(template).replace("/acme", "/no-such-tenant-anywhere");
        let r = gw.request(&method.to_uppercase(), &path, Some(ADMIN_KEY), Some("{}"));
        // A route that exists answers something other than "no such route" / "method not allowed".
        assert_ne!(
            r.error_code().as_deref(),
            Some("method_not_allowed"),
            "{method} {path}"
        );
        let no_route = r.status == 404 && r.json()["error"]["message"] == "No such route.";
        assert!(!no_route, "{method} {path} is documented but not routed");
    }
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
