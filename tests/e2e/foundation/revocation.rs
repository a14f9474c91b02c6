//! Revocation that really ends: the per-isolate cache never answers with an entry older than
//! `CONFIG_TTL_MS`, a failed reload never stretches an entry's life, and tokens that cannot be
//! caller keys cost no D1 query. D1 rows are changed straight in the database, as another
//! isolate's admin write would change them, so this isolate's own invalidation plays no part.

use crate::support::gateway::{Gateway, Resp, Tenant};
use serde_json::json;
use std::time::Duration;

const TTL_MS: u64 = 1_000;

fn gateway() -> &'static Gateway {
    static GW: std::sync::OnceLock<Gateway> = std::sync::OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[("CONFIG_TTL_MS", "1000")]))
}

fn past_the_ttl() {
    std::thread::sleep(Duration::from_millis(TTL_MS + 200));
}

/// Twenty requests at once, each on its own connection.
fn twenty_at_once(t: &Tenant<'_>) -> Vec<u16> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..20).map(|_| s.spawn(|| t.chat("m").status)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn a_caller_key_deleted_by_another_isolate_admits_nobody_after_the_ttl() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("revoked-key", &["sk-1"], "failover");
    assert_eq!(t.chat("m").status, 200, "warm");
    gw.sql(
        "DELETE FROM caller_keys WHERE tenant_id = ?1",
        &[json!(t.id)],
    );
    past_the_ttl();
    assert_eq!(twenty_at_once(&t), vec![401; 20]);
}

#[test]
fn a_tenant_deleted_by_another_isolate_admits_nobody_after_the_ttl() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("deleted-tenant", &["sk-1"], "failover");
    assert_eq!(t.chat("m").status, 200, "warm");
    // Only the tenant row: its caller key still resolves, so the config cache must notice.
    gw.sql("DELETE FROM tenants WHERE id = ?1", &[json!(t.id)]);
    past_the_ttl();
    assert_eq!(twenty_at_once(&t), vec![401; 20]);
}

#[test]
fn a_config_that_fails_to_reload_is_not_served_past_its_ttl() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("unreadable", &["sk-1"], "failover");
    assert_eq!(t.chat("m").status, 200, "warm");
    gw.sql(
        "UPDATE tenants SET settings = 'not json' WHERE id = ?1",
        &[json!(t.id)],
    );
    // A request in the second half of the TTL starts a background reload, which fails.
    std::thread::sleep(Duration::from_millis(TTL_MS * 6 / 10));
    assert_eq!(t.chat("m").status, 200, "still inside the TTL");
    past_the_ttl();
    let statuses = twenty_at_once(&t);
    assert!(
        statuses.iter().all(|s| *s == 500),
        "an unreadable config is an internal error, never the old copy: {statuses:?}"
    );
    // Once readable again, the tenant is served again.
    gw.sql(
        "UPDATE tenants SET settings = '{}' WHERE id = ?1",
        &[json!(t.id)],
    );
    assert_eq!(t.chat("m").status, 200);
}

#[test]
fn a_key_in_steady_use_is_reloaded_in_the_background_without_a_d1_query_on_the_request() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("steady", &["sk-1"], "failover");
    assert_eq!(t.chat("m").status, 200, "warm");
    let started = std::time::Instant::now();
    let mut queries = Vec::new();
    while started.elapsed() < Duration::from_millis(TTL_MS * 3) {
        let r = t.chat("m");
        assert_eq!(r.status, 200);
        queries.push(r.header("x-cognigate-d1-queries").unwrap().to_owned());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        queries.iter().all(|q| q == "0"),
        "every request was warm: {queries:?}"
    );
}

fn d1_queries_of(gw: &Gateway, r: &Resp) -> u64 {
    let id = r.header("x-cognigate-request-id").unwrap();
    gw.request_line(id)["d1_queries"]
        .as_u64()
        .unwrap_or_else(|| panic!("no log line for {id}"))
}

#[test]
fn tokens_that_cannot_be_caller_keys_are_refused_without_a_d1_query() {
    let gw = gateway();
    let body = json!({"model": "m", "messages": []}).to_string();
    for token in ["sk-random-1", "cg_short", &format!("cg_{}", "Z".repeat(48))] {
        let r = gw.request("POST", "/v1/chat/completions", Some(token), Some(&body));
        assert_eq!(r.status, 401);
        assert_eq!(d1_queries_of(gw, &r), 0, "{token}");
    }
    // A well-formed unknown key costs one query, then is remembered as unknown.
    let unknown = format!("cg_{}", "ab".repeat(24));
    let first = gw.request("POST", "/v1/chat/completions", Some(&unknown), Some(&body));
    let second = gw.request("POST", "/v1/chat/completions", Some(&unknown), Some(&body));
    assert_eq!((first.status, second.status), (401, 401));
    assert_eq!(
        (d1_queries_of(gw, &first), d1_queries_of(gw, &second)),
        (1, 0)
    );
}
