//! The admin API's doors on D1 through the real worker: only the admin key opens them, caller and
//! provider keys are shown once or only by id, one tenant never sees another's config, bad input
//! is refused and writes nothing, and every documented operation is served.

use super::tables_snapshot;
use crate::support::gateway::{Gateway, ADMIN_KEY};
use cognigate::api::endpoint::{example_path, ADMIN_OPERATIONS};
use cognigate::mock::MockProvider;
use serde_json::{json, Value};

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
