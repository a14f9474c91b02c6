//! The admin integrity rules over the in-memory store: caller keys carry a MAC, a present
//! body must be a JSON object, racing key-policy PATCHes merge field by field, and no write can
//! leave a chain longer than `max_fallback_depth`. A race is staged with
//! `MemoryStore::before_next_write`: another admin's write lands between a command's reads and
//! its write, as it can on D1.

use crate::support::admin_world::AdminWorld as World;
use cognigate::admin::store::{AlertSecretWrite, CatalogStore, DepthWrite, TenantStore};
use cognigate::admin::Verb;
use cognigate::callers::auth::{hash_key, may_be_caller_key};
use cognigate::config::sealed::Kek;
use cognigate::config::{Chain, KeyPolicy, RouteName, Rule, SettingsOverrides, TenantId};
use futures::executor::block_on;
use serde_json::{json, Value};

const KEYS: &str = "/admin/v1/tenants/acme/api-keys";
const RULES: &str = "/admin/v1/tenants/acme/routing-rules";
const SETTINGS: &str = "/admin/v1/tenants/acme/settings";

fn acme() -> TenantId {
    TenantId::parse("acme").unwrap()
}

/// A fresh key of `acme` with this POST body: (id, key).
fn mint(w: &World, body: &str) -> (String, String) {
    let v = w.ok(Verb::Post, KEYS, body);
    (
        v["id"].as_str().unwrap().to_owned(),
        v["key"].as_str().unwrap().to_owned(),
    )
}

fn stored_policy(w: &World, id: &str) -> KeyPolicy {
    w.store.data(&acme()).unwrap().keys[id].policy.clone()
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_default()
}

fn chain_body(matches: &str, len: usize) -> String {
    let chain: Vec<String> = (0..len).map(|i| format!("m{i}")).collect();
    json!({"match": matches, "chain": chain}).to_string()
}

fn chain(len: usize) -> Chain {
    let names = (0..len)
        .map(|i| cognigate::config::ChainEntry::Name(RouteName::parse(&format!("m{i}")).unwrap()))
        .collect();
    Chain::new(names, 20).unwrap()
}

// --- caller keys carry a MAC ---

#[test]
fn a_minted_caller_key_carries_a_mac_under_the_deployment_secret() {
    let w = World::with_acme();
    let (id, key) = mint(&w, "");
    let mac = w.kek.caller_key_mac();
    assert!(may_be_caller_key(&key, Some(mac)), "{key}");
    let (body, tag) = key.rsplit_once('_').unwrap();
    assert_eq!((body.len(), tag.len()), (3 + 48, 32), "{key}");
    // Only the hash of the whole token is stored.
    assert_eq!(
        w.store.data(&acme()).unwrap().keys[&id].key_hash,
        hash_key(&key)
    );
}

#[test]
fn a_tampered_key_or_one_of_another_deployment_fails_its_mac() {
    let w = World::with_acme();
    let (_, key) = mint(&w, "");
    let mac = w.kek.caller_key_mac();
    let mut tampered = key.clone().into_bytes();
    tampered[5] = if tampered[5] == b'a' { b'b' } else { b'a' };
    assert!(!may_be_caller_key(
        &String::from_utf8(tampered).unwrap(),
        Some(mac)
    ));
    let other = Kek::from_hex(&"22".repeat(32)).unwrap();
    assert!(!may_be_caller_key(&key, Some(other.caller_key_mac())));
    let random = format!("cg_{}_{}", "0123".repeat(12), "89ab".repeat(8));
    assert!(!may_be_caller_key(&random, Some(mac)));
}

// --- a present body must be a JSON object ---

#[test]
fn a_present_body_that_is_not_a_json_object_is_400_whitespace_alone_included() {
    let w = World::with_acme();
    let (id, _) = mint(&w, r#"{"rpm":60}"#);
    let key = format!("{KEYS}/{id}");
    for body in [" ", "\n", "\t \r\n", "null", "[]", "5", "\"x\"", "true"] {
        let (status, v) = w.refused(Verb::Patch, &key, body);
        assert_eq!((status, code(&v)), (400, "invalid_request"), "{body:?}");
        assert_eq!(v["error"]["param"], "body", "{body:?}");
        let (status, _) = w.refused(Verb::Post, KEYS, body);
        assert_eq!(status, 400, "POST {body:?}");
        let (status, _) = w.refused(Verb::Post, "/admin/v1/tenants/acme/breakers/reset", body);
        assert_eq!(status, 400, "reset {body:?}");
    }
    assert_eq!(stored_policy(&w, &id).rpm, Some(60));
    assert_eq!(
        w.store.data(&acme()).unwrap().keys.len(),
        1,
        "no key minted"
    );
}

// --- concurrent PATCHes of one key's policy merge field by field ---

#[test]
fn concurrent_patches_of_different_fields_both_land() {
    let w = World::with_acme();
    let (id, _) = mint(&w, r#"{"name":"bot"}"#);
    let raced = id.clone();
    w.store.before_next_write(move |d| {
        d.keys.get_mut(&raced).unwrap().policy.rpm = Some(60);
    });
    let v = w.ok(Verb::Patch, &format!("{KEYS}/{id}"), r#"{"tpm":1000}"#);
    assert_eq!(
        (v["name"].clone(), v["rpm"].clone(), v["tpm"].clone()),
        (json!("bot"), json!(60), json!(1000))
    );
    let p = stored_policy(&w, &id);
    assert_eq!(
        (p.rpm, p.tpm, p.name.as_deref()),
        (Some(60), Some(1000), Some("bot"))
    );
}

#[test]
fn of_two_racing_writes_of_one_field_the_later_wins_and_the_others_stay() {
    let w = World::with_acme();
    let (id, _) = mint(&w, "");
    let raced = id.clone();
    w.store.before_next_write(move |d| {
        let p = &mut d.keys.get_mut(&raced).unwrap().policy;
        p.name = Some("bot".into());
        p.rpm = Some(60);
        p.tpm = Some(5);
    });
    w.ok(
        Verb::Patch,
        &format!("{KEYS}/{id}"),
        r#"{"rpm":10,"tpm":null}"#,
    );
    let p = stored_policy(&w, &id);
    assert_eq!(
        (p.rpm, p.tpm, p.name.as_deref()),
        (Some(10), None, Some("bot"))
    );
}

// --- no write leaves a chain longer than max_fallback_depth ---

#[test]
fn a_rule_write_racing_a_lowered_depth_is_refused_and_not_stored() {
    let w = World::with_acme();
    w.store.before_next_write(|d| {
        d.record.as_mut().unwrap().settings.max_fallback_depth = Some(2);
    });
    let (status, v) = w.refused(Verb::Put, RULES, &chain_body("r", 4));
    assert_eq!(status, 400);
    assert_eq!(v["error"]["param"], "chain");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("at most 2"));
    assert!(w.store.data(&acme()).unwrap().rules.is_empty());
}

#[test]
fn a_depth_lowered_while_a_longer_chain_was_written_is_refused() {
    let w = World::with_acme();
    w.store.before_next_write(|d| {
        d.rules.insert(RouteName::parse("r").unwrap(), chain(4));
    });
    let (status, v) = w.refused(Verb::Put, SETTINGS, r#"{"max_fallback_depth":2}"#);
    assert_eq!(status, 400);
    assert_eq!(v["error"]["param"], "max_fallback_depth");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("'r' (4 entries)"));
    let settings = w.ok(Verb::Get, SETTINGS, "");
    assert_eq!(settings["max_fallback_depth"], 5);
}

#[test]
fn the_store_writes_a_rule_only_within_the_depth_it_holds_at_that_moment() {
    let w = World::with_acme();
    let store = &w.store;
    let (t, r) = (acme(), RouteName::parse("r").unwrap());
    assert_eq!(
        block_on(store.put_rule(&t, &Rule::unconditional(r.clone(), chain(5)), 5, 0)).unwrap(),
        DepthWrite::Written
    );
    assert_eq!(
        block_on(store.put_rule(&t, &Rule::unconditional(r.clone(), chain(6)), 5, 0)).unwrap(),
        DepthWrite::DepthExceeded,
        "the deployment default"
    );
    let lowered = SettingsOverrides {
        max_fallback_depth: Some(3),
        ..SettingsOverrides::default()
    };
    assert_eq!(
        block_on(store.put_settings(&t, &lowered, 3, AlertSecretWrite::Keep)).unwrap(),
        DepthWrite::DepthExceeded,
        "a 5-entry rule is stored"
    );
    block_on(store.put_rule(&t, &Rule::unconditional(r.clone(), chain(3)), 5, 0)).unwrap();
    assert_eq!(
        block_on(store.put_settings(&t, &lowered, 3, AlertSecretWrite::Keep)).unwrap(),
        DepthWrite::Written
    );
    assert_eq!(
        block_on(store.put_rule(&t, &Rule::unconditional(r.clone(), chain(4)), 5, 0)).unwrap(),
        DepthWrite::DepthExceeded,
        "the tenant's override"
    );
    let ghost = TenantId::parse("ghost").unwrap();
    assert_eq!(
        block_on(store.put_rule(&ghost, &Rule::unconditional(r.clone(), chain(1)), 5, 0)).unwrap(),
        DepthWrite::DepthExceeded,
        "no tenant, no write"
    );
    let rules = block_on(store.list_rules(&t)).unwrap();
    assert!(rules.iter().all(|r| r.chain.len() <= 3), "{rules:?}");
}
