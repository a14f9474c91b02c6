//! The admin integrity rules on workerd with local D1: a caller key's MAC is checked before
//! any D1 query, a present admin body must be a JSON object, racing key-policy PATCHes all land
//! (D1's `json_patch` in the write), and racing rule and depth writes never leave a chain longer
//! than `max_fallback_depth` (the check is in the write's own statement).

use crate::support::gateway::{Gateway, Resp, Tenant, ADMIN_KEY};
use cognigate::callers::auth::hash_key;
use serde_json::{json, Value};

fn gw() -> &'static Gateway {
    Gateway::shared()
}

/// The D1 queries the request's log line counted.
fn d1_queries_of(gw: &Gateway, r: &Resp) -> u64 {
    let id = r.header("x-cognigate-request-id").unwrap();
    gw.request_line(id)["d1_queries"]
        .as_u64()
        .unwrap_or_else(|| panic!("no log line for {id}"))
}

fn chat_as(gw: &Gateway, key: &str) -> Resp {
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    gw.request(
        "POST",
        "/v1/chat/completions",
        Some(key),
        Some(&body.to_string()),
    )
}

#[test]
fn a_well_formed_token_whose_mac_fails_costs_no_d1_query_and_old_keys_still_work() {
    let gw = gw();
    let (t, _mock) = gw.tenant_with_mock("mac", &["sk-1"], "round_robin");
    let (body, tag) = t.key.rsplit_once('_').unwrap();
    assert_eq!((body.len(), tag.len()), (3 + 48, 32), "{}", t.key);
    assert_eq!(chat_as(gw, &t.key).status, 200);

    let mut tampered = t.key.clone().into_bytes();
    tampered[4] = if tampered[4] == b'a' { b'b' } else { b'a' };
    let tampered = String::from_utf8(tampered).unwrap();
    // Random tokens of the minted shape: each would be a new D1 query if it were looked up.
    let random: Vec<String> = (0..3)
        .map(|i| format!("cg_{}_{}", format!("{i:02x}").repeat(24), "ab".repeat(16)))
        .collect();
    for token in std::iter::once(&tampered).chain(&random) {
        let r = chat_as(gw, token);
        assert_eq!(r.status, 401, "{token}");
        assert_eq!(r.error_code().as_deref(), Some("invalid_api_key"));
        assert_eq!(d1_queries_of(gw, &r), 0, "{token}");
    }

    // A key minted before keys carried a MAC (`cg_` and 48 hex digits) is looked up as before.
    let old = format!("cg_{}", "7c".repeat(24));
    gw.sql(
        "INSERT INTO caller_keys (id, tenant_id, key_hash, created_at, policy) VALUES (?1, ?2, ?3, 0, '{}')",
        &[json!("ck_00000000000000a1"), json!(t.id), json!(hash_key(&old))],
    );
    assert_eq!(chat_as(gw, &old).status, 200);
}

#[test]
fn a_present_admin_body_that_is_not_a_json_object_is_400_and_changes_nothing() {
    let gw = gw();
    let t = gw.tenant("body");
    let r = gw.admin("POST", &t.path("/api-keys"), Some(json!({"rpm": 60})));
    let id = r.json()["id"].as_str().unwrap().to_owned();
    let key_path = t.path(&format!("/api-keys/{id}"));
    for body in [" ", "\n", "null", "[]"] {
        let r = gw.request("PATCH", &key_path, Some(ADMIN_KEY), Some(body));
        assert_eq!(r.status, 400, "PATCH {body:?}: {}", r.text);
        let r = gw.request("POST", &t.path("/api-keys"), Some(ADMIN_KEY), Some(body));
        assert_eq!(r.status, 400, "POST {body:?}: {}", r.text);
    }
    let r = gw.request("PATCH", &key_path, Some(ADMIN_KEY), Some(""));
    assert_eq!((r.status, r.json()["rpm"].clone()), (200, json!(60)));
    let keys = gw.admin("GET", &t.path("/api-keys"), None).json();
    assert_eq!(keys["data"].as_array().unwrap().len(), 2, "{keys}");
}

/// The PATCHes that each set one field of a key's policy.
fn one_field_each() -> [Value; 5] {
    [
        json!({"name": "bot"}),
        json!({"models": ["m"]}),
        json!({"rpm": 60}),
        json!({"tpm": 1000}),
        json!({"budget": {"usd": 5.0, "period": "day"}}),
    ]
}

#[test]
fn concurrent_patches_of_one_keys_policy_all_land() {
    let gw = gw();
    let t = gw.tenant("merge");
    let ids: Vec<String> = (0..4)
        .map(|_| {
            let r = gw.admin("POST", &t.path("/api-keys"), None);
            r.json()["id"].as_str().unwrap().to_owned()
        })
        .collect();
    std::thread::scope(|s| {
        for id in &ids {
            for patch in one_field_each() {
                let path = t.path(&format!("/api-keys/{id}"));
                s.spawn(move || {
                    let r = gw.admin("PATCH", &path, Some(patch));
                    assert_eq!(r.status, 200, "{}", r.text);
                });
            }
        }
    });
    let keys = gw.admin("GET", &t.path("/api-keys"), None).json();
    let patched = keys["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| ids.iter().any(|id| k["id"] == id.as_str()));
    assert_eq!(patched.clone().count(), ids.len());
    for key in patched {
        for field in ["name", "models", "rpm", "tpm", "budget"] {
            assert!(!key[field].is_null(), "{field} was lost: {key}");
        }
    }
}

fn chain(len: usize) -> Vec<String> {
    (0..len).map(|i| format!("m{i}")).collect()
}

/// A rule of 5 entries and a depth of 3, written at once: whichever lands, the tenant never holds
/// a chain longer than its depth.
fn race_rule_and_depth(t: &Tenant<'_>) {
    std::thread::scope(|s| {
        s.spawn(|| t.put("/routing-rules", json!({"match": "r", "chain": chain(5)})));
        s.spawn(|| t.put("/settings", json!({"max_fallback_depth": 3})));
    });
    let depth = t.gw.admin("GET", &t.path("/settings"), None).json()["max_fallback_depth"]
        .as_u64()
        .unwrap();
    let rules = t.gw.admin("GET", &t.path("/routing-rules"), None).json();
    for rule in rules["data"].as_array().unwrap() {
        let len = rule["chain"].as_array().unwrap().len() as u64;
        assert!(len <= depth, "{} has {len} entries, depth {depth}", t.id);
    }
}

#[test]
fn racing_rule_and_depth_writes_never_store_a_chain_longer_than_the_depth() {
    let gw = gw();
    let tenants: Vec<Tenant<'_>> = (0..8).map(|_| gw.tenant("depth")).collect();
    for t in &tenants {
        assert_eq!(t.rule("r", &["m0"]).status, 200);
    }
    std::thread::scope(|s| {
        for t in &tenants {
            s.spawn(move || race_rule_and_depth(t));
        }
    });
}
