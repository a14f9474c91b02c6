//! Isolation: a matrix over every admin and caller route, where one tenant's ids and names never
//! reach another's objects, and no admin route answers without the admin key.

use crate::support::gateway::{Gateway, Tenant};
use cognigate::api::endpoint::{example_path, ADMIN_OPERATIONS};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::json;

/// Everything D1 holds for these tenants (other tests write other tenants concurrently).
fn d1_dump(gw: &Gateway, tenants: &[&str]) -> String {
    let mut all = String::new();
    for t in tenants {
        all.push_str(
            &serde_json::to_string(&gw.sql("SELECT * FROM tenants WHERE id = ?1", &[json!(t)]))
                .unwrap(),
        );
        for table in [
            "caller_keys",
            "providers",
            "models",
            "aliases",
            "routing_rules",
        ] {
            let rows = gw.sql(
                &format!("SELECT * FROM {table} WHERE tenant_id = ?1 ORDER BY 1, 2"),
                &[json!(t)],
            );
            all.push_str(&serde_json::to_string(&rows).unwrap());
        }
    }
    all
}

/// Two tenants with the same provider name on different mocks, and objects only A has.
struct Pair<'g> {
    a: Tenant<'g>,
    b: Tenant<'g>,
    a_mock: MockProvider,
    b_mock: MockProvider,
    a_key_id: String,
}

fn pair(gw: &Gateway) -> Pair<'_> {
    let a_mock = MockProvider::start("iso-a").unwrap();
    let b_mock = MockProvider::start("iso-b").unwrap();
    let a = gw.tenant("matrix-a");
    let b = gw.tenant("matrix-b");
    a.provider("shared", &a_mock.url(), &["sk-a"], "failover");
    a.provider("a-only-provider", &a_mock.url(), &["sk-a2"], "failover");
    b.provider("shared", &b_mock.url(), &["sk-b"], "failover");
    a.model("a-model", "shared", 1.0, 8000);
    b.model("b-model", "shared", 1.0, 8000);
    assert_eq!(
        a.put("/aliases/a-alias", json!({"pin": "a-model"})).status,
        200
    );
    assert_eq!(a.rule("a-rule", &["a-model"]).status, 200);
    let keys = gw.admin("GET", &a.path("/api-keys"), None);
    let a_key_id = keys.json()["data"][0]["id"].as_str().unwrap().to_owned();
    Pair {
        a,
        b,
        a_mock,
        b_mock,
        a_key_id,
    }
}

#[test]
fn no_admin_route_answers_without_the_admin_key() {
    let gw = Gateway::shared();
    let p = pair(gw);
    let before = d1_dump(gw, &[&p.a.id, &p.b.id]);
    let mut cells = 0;
    for (method, template) in ADMIN_OPERATIONS {
        let path = example_path(template).replace("/acme", &format!("/{}", p.a.id));
        for key in [
            None,
            Some(p.a.key.as_str()),
            Some(p.b.key.as_str()),
            Some("wrong-admin-key"),
        ] {
            let r = gw.request(&method.to_uppercase(), &path, key, Some("{}"));
            assert_eq!(
                r.status, 401,
                "{method} {path} with {key:?}: {:.300}",
                r.text
            );
            assert_eq!(r.error_code().as_deref(), Some("invalid_admin_key"));
            cells += 1;
        }
    }
    assert!(
        d1_dump(gw, &[&p.a.id, &p.b.id]) == before,
        "nothing changed"
    );
    assert!(cells >= 100, "{cells}");
}

#[test]
fn another_tenants_ids_do_not_cross_through_admin_paths() {
    let gw = Gateway::shared();
    let p = pair(gw);
    let b = |rest: &str| p.b.path(rest);
    for (method, path) in [
        ("GET", b("/models/a-model")),
        ("DELETE", b("/models/a-model")),
        ("GET", b("/aliases/a-alias")),
        ("DELETE", b("/aliases/a-alias")),
        ("DELETE", b("/routing-rules/a-rule")),
        ("GET", b("/providers/a-only-provider")),
        ("DELETE", b("/providers/a-only-provider")),
        ("DELETE", b(&format!("/api-keys/{}", p.a_key_id))),
    ] {
        let r = gw.admin(method, &path, None);
        assert_eq!(r.status, 404, "{method} {path}: {}", r.text);
    }
    let r = gw.admin(
        "POST",
        &b("/breakers/reset"),
        Some(json!({"provider": "a-only-provider"})),
    );
    assert_eq!(r.status, 404);
    let r = p.b.put(
        "/models/steal",
        json!({"provider": "a-only-provider", "context_window": 8000}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    // A's objects are all still there and still work.
    assert_eq!(p.a.chat("a-rule").status, 200);
    assert_eq!(p.a.chat("a-alias").status, 200);
    for listing in [
        "/models",
        "/aliases",
        "/routing-rules",
        "/providers",
        "/api-keys",
    ] {
        let r = gw.admin("GET", &b(listing), None);
        assert!(
            !r.text.contains("a-model")
                && !r.text.contains("a-alias")
                && !r.text.contains("a-rule")
                && !r.text.contains("a-only-provider")
                && !r.text.contains(&p.a_key_id),
            "{listing}: {}",
            r.text
        );
    }
}

#[test]
fn another_tenants_names_do_not_cross_through_caller_routes() {
    let gw = Gateway::shared();
    let p = pair(gw);
    for name in ["a-model", "a-alias", "a-rule", "a-only-provider", "shared"] {
        let r = p.b.chat(name);
        assert_eq!(r.status, 404, "{name}: {}", r.text);
        assert_eq!(r.error_code().as_deref(), Some("model_not_found"));
    }
    assert_eq!(p.b.chat("b-model").status, 200);
    assert_eq!(p.a_mock.count(), 0, "B never reached A's upstream");
    assert_eq!(p.b_mock.keys(), ["sk-b"]);
    let models = gw.request("GET", "/v1/models", Some(&p.b.key), None);
    let ids: Vec<String> = models.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        ids.iter().any(|i| i == "b-model") && !ids.iter().any(|i| i.starts_with("a-")),
        "{ids:?}"
    );
    // A's open breaker on the shared provider name is not B's.
    p.a_mock.push(Rule::any(Reply::status(503)));
    for _ in 0..5 {
        p.a.chat("a-model");
    }
    let a_health = gw.request("GET", "/v1/health", Some(&p.a.key), None).json();
    assert_eq!(a_health["breakers"].as_array().unwrap().len(), 1);
    let b_health = gw.request("GET", "/v1/health", Some(&p.b.key), None).json();
    assert_eq!(b_health["breakers"], json!([]));
    assert_eq!(p.b.chat("b-model").status, 200);
}
