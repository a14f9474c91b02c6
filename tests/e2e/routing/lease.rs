//! Admission grants (`ROUTING_LEASE_MS`, 1000 by default): warm requests skip the routing object
//! while a candidate is quiet, an open breaker is skipped locally, concurrent requests share one
//! acquire, and every rule still holds inside the isolate that reports a change.

use crate::support::gateway::Gateway;
use cognigate::mock::{Reply, Rule};
use serde_json::json;
use std::sync::OnceLock;

fn gateway() -> &'static Gateway {
    static GW: OnceLock<Gateway> = OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[("ROUTING_LEASE_MS", "1000")]))
}

#[test]
fn warm_requests_under_a_grant_make_no_routing_object_call() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("grant", &["sk-1"], "failover");
    let first = t.chat("m");
    assert_eq!(first.header("x-cognigate-do-calls"), Some("1"));
    for _ in 0..5 {
        let r = t.chat("m");
        assert_eq!(r.status, 200);
        assert_eq!(
            r.header("x-cognigate-do-calls"),
            Some("0"),
            "served under the grant"
        );
    }
}

#[test]
fn round_robin_stays_even_under_grants() {
    gateway().assert_round_robin_even("grant-rr");
}

#[test]
fn a_failure_ends_the_grant_so_five_503s_still_open_the_breaker_and_the_next_request_skips() {
    let gw = gateway();
    let (t, mock) = gw.tenant_with_mock("grant-breaker", &["sk-1"], "failover");
    assert_eq!(t.chat("m").status, 200, "a grant is now held");
    mock.push(Rule::any(Reply::status(503)).times(5));
    for _ in 0..5 {
        assert_eq!(t.chat("m").status, 502);
    }
    let before = mock.count();
    let r = t.chat("m");
    assert_eq!(
        r.json()["error"]["attempts"],
        json!([{"provider": "p", "model": "m", "failure": "breaker_open"}])
    );
    assert_eq!(mock.count(), before, "skipped with zero upstream calls");
}

#[test]
fn a_park_ends_the_grant_so_the_next_request_skips_the_parked_key() {
    let gw = gateway();
    let (t, mock) = gw.tenant_with_mock("grant-park", &["sk-1", "sk-2"], "failover");
    assert_eq!(t.chat("m").status, 200);
    mock.push(
        Rule::any(Reply::status(429).header("Retry-After", "120"))
            .key("sk-1")
            .times(1),
    );
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), ["sk-1", "sk-1", "sk-2", "sk-2"]);
}

#[test]
fn one_old_5xx_stops_keeping_grants_away_once_it_ages_out_of_the_breaker_window() {
    let gw = gateway();
    let (t, mock) = gw.tenant_with_mock("grant-quiet", &["sk-1"], "failover");
    let r = t.put("/settings", json!({"breaker": {"window_ms": 500}}));
    assert_eq!(r.status, 200);
    mock.push(Rule::any(Reply::status(503)).times(1));
    assert_eq!(t.chat("m").status, 502);
    std::thread::sleep(std::time::Duration::from_millis(700));
    let r = t.chat("m");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-cognigate-do-calls"), Some("1"));
    let r = t.chat("m");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("x-cognigate-do-calls"),
        Some("0"),
        "quiet again once the failure left the window, so served under a grant"
    );
}

#[test]
fn grants_are_the_default_and_zero_is_the_strict_mode() {
    let default = Gateway::start(&[]);
    let (t, _mock) = default.tenant_with_mock("grant-default", &["sk-1"], "failover");
    assert_eq!(t.chat("m").header("x-cognigate-do-calls"), Some("1"));
    assert_eq!(t.chat("m").header("x-cognigate-do-calls"), Some("0"));
    let strict = Gateway::start(&[("ROUTING_LEASE_MS", "0")]);
    let (t, _mock) = strict.tenant_with_mock("grant-strict", &["sk-1"], "failover");
    for _ in 0..3 {
        assert_eq!(t.chat("m").header("x-cognigate-do-calls"), Some("1"));
    }
}

#[test]
fn while_a_breaker_is_open_requests_skip_it_locally_without_a_routing_object_call() {
    let gw = gateway();
    let (t, mock) = gw.tenant_with_mock("grant-skip", &["sk-1"], "failover");
    // A second model on another provider serves while `m` is skipped.
    let backup = cognigate::mock::MockProvider::start("grant-skip-b").unwrap();
    t.provider("b", &backup.url(), &["sk-b"], "failover");
    t.model("n", "b", 2.0, 8000);
    t.rule("chain", &["m", "n"]);
    mock.push(Rule::any(Reply::status(503)).times(5));
    for _ in 0..5 {
        assert_eq!(t.chat("m").status, 502);
    }
    let before = mock.count();
    // The first request after the breaker opened asks the object and learns it is open.
    let first = t.chat("chain");
    assert_eq!(first.status, 200);
    assert!(first.json()["model"].as_str().is_some());
    for _ in 0..5 {
        let r = t.chat("chain");
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-cognigate-model"), Some("n"));
        assert_eq!(
            r.header("x-cognigate-do-calls"),
            Some("0"),
            "`m` skipped locally, `n` served under its grant"
        );
    }
    assert_eq!(mock.count(), before, "the open breaker's model got no call");
}

#[test]
fn concurrent_requests_of_a_candidate_without_a_grant_share_one_acquire() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("grant-flight", &["sk-1"], "failover");
    let calls: Vec<u32> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..16)
            .map(|_| {
                s.spawn(|| {
                    let r = t.chat("m");
                    assert_eq!(r.status, 200);
                    r.header("x-cognigate-do-calls").unwrap().parse().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total: u32 = calls.iter().sum();
    assert!(
        total < 16,
        "each request asked for itself instead of waiting for the grant in flight: {calls:?}"
    );
}
