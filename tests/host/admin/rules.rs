//! Every admin rule, proved over the in-memory store: the same commands the worker runs on D1.

use crate::support::admin_world::AdminWorld as World;
use cognigate::admin::Verb;
use cognigate::config::{ModelId, ProviderName, TenantId};
use serde_json::{json, Value};

impl World {
    fn tenant(&self) -> TenantId {
        TenantId::parse("acme").unwrap()
    }

    /// Tenant `acme`, provider `openai`, models `a` and `b` on it.
    fn with_catalog() -> Self {
        let w = Self::with_acme();
        w.ok(
            Verb::Put,
            "/admin/v1/tenants/acme/providers/openai",
            PROVIDER,
        );
        for m in ["a", "b"] {
            w.ok(
                Verb::Put,
                &format!("/admin/v1/tenants/acme/models/{m}"),
                MODEL,
            );
        }
        w
    }

    fn snapshot(&self) -> String {
        format!("{:?}", self.store.data(&self.tenant()))
    }
}

const PROVIDER: &str =
    r#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["sk-live-abcdefgh1234"]}"#;
const MODEL: &str = r#"{"provider":"openai","context_window":8000,"input_price_per_mtok":1}"#;

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_default()
}

#[test]
fn a_new_tenant_starts_with_the_default_aliases_and_default_settings() {
    let w = World::new();
    let (status, body) = w
        .call(
            Verb::Post,
            "/admin/v1/tenants",
            r#"{"id":"acme","name":" Acme "}"#,
        )
        .unwrap();
    assert_eq!(status, 201);
    assert_eq!(body["name"], "Acme");
    assert_eq!(body["settings"]["max_fallback_depth"], 5);
    let aliases = w.ok(Verb::Get, "/admin/v1/tenants/acme/aliases", "");
    assert!(!aliases["data"].as_array().unwrap().is_empty());
}

#[test]
fn creating_a_tenant_that_exists_is_409_and_changes_nothing() {
    let w = World::with_catalog();
    w.ok(Verb::Delete, "/admin/v1/tenants/acme/aliases/fast", "");
    let before = w.snapshot();
    let (status, body) = w.refused(
        Verb::Post,
        "/admin/v1/tenants",
        r#"{"id":"acme","name":"Other"}"#,
    );
    assert_eq!((status, code(&body)), (409, "conflict"));
    assert_eq!(
        w.snapshot(),
        before,
        "the deleted default alias must not come back"
    );
}

#[test]
fn an_invalid_body_is_400_naming_the_field_and_writes_nothing() {
    let w = World::new();
    let (status, body) = w.refused(
        Verb::Post,
        "/admin/v1/tenants",
        r#"{"id":"acme","name":""}"#,
    );
    assert_eq!(status, 400);
    assert_eq!(body["error"]["param"], "name");
    assert!(w.store.data(&w.tenant()).is_none());
}

#[test]
fn every_route_under_an_unknown_tenant_is_404() {
    let w = World::new();
    for path in [
        "/admin/v1/tenants/ghost",
        "/admin/v1/tenants/ghost/models",
        "/admin/v1/tenants/ghost/settings",
    ] {
        let (status, body) = w.refused(Verb::Get, path, "");
        assert_eq!((status, code(&body)), (404, "not_found"), "{path}");
    }
}

#[test]
fn a_provider_still_named_by_models_is_409_listing_them_and_stays() {
    let w = World::with_catalog();
    let (status, body) = w.refused(Verb::Delete, "/admin/v1/tenants/acme/providers/openai", "");
    assert_eq!(status, 409);
    assert!(body["error"]["message"].as_str().unwrap().contains("a, b"));
    assert!(w.routing.wiped.borrow().is_empty());
    w.ok(Verb::Get, "/admin/v1/tenants/acme/providers/openai", "");
}

#[test]
fn a_deleted_provider_takes_its_routing_state_with_it() {
    let w = World::with_catalog();
    for m in ["a", "b"] {
        w.ok(
            Verb::Delete,
            &format!("/admin/v1/tenants/acme/models/{m}"),
            "",
        );
    }
    w.ok(Verb::Delete, "/admin/v1/tenants/acme/providers/openai", "");
    let openai = ProviderName::parse("openai").unwrap();
    assert_eq!(*w.routing.wiped.borrow(), vec![(w.tenant(), openai)]);
    let (status, _) = w.refused(Verb::Delete, "/admin/v1/tenants/acme/providers/openai", "");
    assert_eq!(status, 404);
}

#[test]
fn a_model_on_a_provider_that_does_not_exist_is_400_on_provider() {
    let w = World::with_catalog();
    let body = r#"{"provider":"nope","context_window":8000}"#;
    let (status, err) = w.refused(Verb::Put, "/admin/v1/tenants/acme/models/c", body);
    assert_eq!(
        (status, err["error"]["param"].as_str()),
        (400, Some("provider"))
    );
}

#[test]
fn model_ids_and_alias_names_share_one_namespace() {
    let w = World::with_catalog();
    let (status, _) = w.refused(Verb::Put, "/admin/v1/tenants/acme/models/fast", MODEL);
    assert_eq!(status, 409, "a model may not take an alias's name");
    let (status, _) = w.refused(
        Verb::Put,
        "/admin/v1/tenants/acme/aliases/a",
        r#"{"pin":"b"}"#,
    );
    assert_eq!(status, 409, "an alias may not take a model's id");
    w.ok(
        Verb::Put,
        "/admin/v1/tenants/acme/aliases/mine",
        r#"{"pin":"b"}"#,
    );
}

#[test]
fn a_chain_longer_than_the_depth_limit_is_refused() {
    let w = World::with_catalog();
    let chain: Vec<String> = (0..6).map(|i| format!("\"m{i}\"")).collect();
    let body = format!(r#"{{"match":"r","chain":[{}]}}"#, chain.join(","));
    let (status, _) = w.refused(Verb::Put, "/admin/v1/tenants/acme/routing-rules", &body);
    assert_eq!(status, 400);
    assert!(
        w.ok(Verb::Get, "/admin/v1/tenants/acme/routing-rules", "")["data"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_rule_is_written_with_its_dead_entries_named_as_warnings() {
    let w = World::with_catalog();
    let body = r#"{"match":"r","chain":["a","ghost","b"]}"#;
    let view = w.ok(Verb::Put, "/admin/v1/tenants/acme/routing-rules", body);
    let warnings = view["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].as_str().unwrap().contains("ghost"));
    assert_eq!(view["chain"], json!(["a", "ghost", "b"]));
}

#[test]
fn a_depth_limit_below_an_existing_chain_is_refused_naming_the_rule() {
    let w = World::with_catalog();
    w.ok(
        Verb::Put,
        "/admin/v1/tenants/acme/routing-rules",
        r#"{"match":"r","chain":["a","b"]}"#,
    );
    let (status, body) = w.refused(
        Verb::Put,
        "/admin/v1/tenants/acme/settings",
        r#"{"max_fallback_depth":1}"#,
    );
    assert_eq!(status, 400);
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("'r' (2 entries)"));
    let settings = w.ok(Verb::Get, "/admin/v1/tenants/acme/settings", "");
    assert_eq!(settings["max_fallback_depth"], 5);
    w.ok(
        Verb::Put,
        "/admin/v1/tenants/acme/settings",
        r#"{"max_fallback_depth":2}"#,
    );
}

#[test]
fn deleting_a_tenant_removes_everything_it_owns_and_wipes_each_provider() {
    let w = World::with_catalog();
    w.ok(Verb::Post, "/admin/v1/tenants/acme/api-keys", "");
    w.ok(Verb::Delete, "/admin/v1/tenants/acme", "");
    assert!(w.store.data(&w.tenant()).is_none());
    assert_eq!(w.routing.wiped.borrow().len(), 1);
    w.ok(
        Verb::Post,
        "/admin/v1/tenants",
        r#"{"id":"acme","name":"Again"}"#,
    );
    assert!(w.ok(Verb::Get, "/admin/v1/tenants/acme/models", "")["data"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn a_caller_key_is_shown_once_and_stored_only_as_its_hash() {
    let w = World::with_catalog();
    let created = w.ok(Verb::Post, "/admin/v1/tenants/acme/api-keys", "");
    let key = created["key"].as_str().unwrap();
    assert!(!w.snapshot().contains(key));
    let listed = w
        .ok(Verb::Get, "/admin/v1/tenants/acme/api-keys", "")
        .to_string();
    assert!(!listed.contains(key) && listed.contains(created["id"].as_str().unwrap()));
    let path = format!(
        "/admin/v1/tenants/acme/api-keys/{}",
        created["id"].as_str().unwrap()
    );
    w.ok(Verb::Delete, &path, "");
    assert_eq!(w.refused(Verb::Delete, &path, "").0, 404);
}

#[test]
fn a_provider_key_never_leaves_in_a_view_or_reaches_storage_in_the_clear() {
    let w = World::with_catalog();
    let view = w
        .ok(Verb::Get, "/admin/v1/tenants/acme/providers/openai", "")
        .to_string();
    assert!(!view.contains("abcdefgh"));
    assert!(view.contains(r#""last4":"1234""#));
    assert!(!w.snapshot().contains("sk-live-abcdefgh1234"));
}

#[test]
fn an_http_upstream_is_refused_unless_the_deployment_allows_it() {
    let mut w = World::with_catalog();
    let body =
        r#"{"kind":"openai","base_url":"http://127.0.0.1:9/v1","keys":["sk-1234567890abcdef"]}"#;
    let (status, err) = w.refused(Verb::Put, "/admin/v1/tenants/acme/providers/local", body);
    assert_eq!(
        (status, err["error"]["param"].as_str()),
        (400, Some("base_url"))
    );
    w.allow_http = true;
    w.ok(Verb::Put, "/admin/v1/tenants/acme/providers/local", body);
}

#[test]
fn a_breaker_reset_closes_open_breakers_and_refuses_an_unknown_provider() {
    let w = World::with_catalog();
    let openai = ProviderName::parse("openai").unwrap();
    w.routing
        .open
        .borrow_mut()
        .push((w.tenant(), openai.clone(), ModelId::parse("a").unwrap()));
    w.routing
        .open
        .borrow_mut()
        .push((w.tenant(), openai, ModelId::parse("b").unwrap()));
    let (status, _) = w.refused(
        Verb::Post,
        "/admin/v1/tenants/acme/breakers/reset",
        r#"{"provider":"nope"}"#,
    );
    assert_eq!(status, 404);
    let one = w.ok(
        Verb::Post,
        "/admin/v1/tenants/acme/breakers/reset",
        r#"{"provider":"openai","model":"a"}"#,
    );
    assert_eq!(one["closed"], json!([{"provider": "openai", "model": "a"}]));
    let all = w.ok(Verb::Post, "/admin/v1/tenants/acme/breakers/reset", "");
    assert_eq!(all["closed"], json!([{"provider": "openai", "model": "b"}]));
}

#[test]
fn events_are_listed_from_since_and_a_bad_since_is_400() {
    let w = World::with_catalog();
    let event = |kind: &str, time: u64, seq: u64| {
        json!({"event": kind, "tenant": "acme", "provider": "openai", "model": "a",
               "reason": "r", "time": time, "transition_seq": seq})
    };
    w.store
        .add_event(&w.tenant(), 10, &event("breaker.opened", 10, 1).to_string());
    w.store
        .add_event(&w.tenant(), 20, &event("breaker.closed", 20, 2).to_string());
    let listed = w.ok(Verb::Get, "/admin/v1/tenants/acme/events?since=15", "");
    let mut expected = event("breaker.closed", 20, 2);
    expected["seq"] = json!(2);
    assert_eq!(listed["data"], json!([expected]));
    let (status, body) = w.refused(Verb::Get, "/admin/v1/tenants/acme/events?since=soon", "");
    assert_eq!(
        (status, body["error"]["param"].as_str()),
        (400, Some("since"))
    );
}

#[test]
fn a_method_a_route_does_not_take_is_405() {
    let w = World::with_catalog();
    let (status, body) = w.refused(Verb::Patch, "/admin/v1/tenants/acme/models", "");
    assert_eq!((status, code(&body)), (405, "method_not_allowed"));
}

#[test]
fn the_openapi_document_is_served_as_stored() {
    let w = World::new();
    let doc = w.ok(Verb::Get, "/admin/v1/openapi.json", "");
    assert!(doc["paths"].is_object());
}
