//! Spec §3 "Running the cascade", failures: what stops the cascade, what moves it down the chain,
//! the 502 when everything fails, the request budget, a client's cancel, and what a breaker
//! counts. Over fake ports with an injected clock.

use super::{failures, served, RATE_LIMITED};
use crate::support::fakes::{FakeClock, Script};
use crate::support::world::{World, LIMITS};
use cognigate::cascade::{Ending, Failure, Limits};
use cognigate::health::Verdict;

#[test]
fn a_request_caused_400_stops_the_cascade_with_one_call_and_the_providers_message() {
    for status in [400, 413, 422] {
        let clock = FakeClock::default();
        let w = World::new(&clock, 3, "failover");
        w.upstream.script(
            "m1",
            &[Script::Status(
                status,
                None,
                r#"{"error":{"message":"Your prompt was flagged","type":"invalid_request_error","code":"content_policy_violation"}}"#,
            )],
        );
        let o = w.run("chain");
        let Ending::RequestCaused(err) = &o.ending else {
            panic!("expected refusal, got {:?}", o.ending)
        };
        assert_eq!(err.status(), status);
        assert_eq!(err.message(), "Your prompt was flagged");
        assert_eq!(err.code(), Some("content_policy_violation"));
        assert_eq!(w.upstream.count(), 1, "no rotation, no cascade");
    }
}

#[test]
fn auth_failure_rotates_to_the_next_key_first() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 2, "failover");
    w.upstream
        .script("m1", &[Script::Status(401, None, "bad key")]);
    let o = w.run("chain");
    assert_eq!(served(&o), ("answer from m1".into(), 0));
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2"]);
}

#[test]
fn server_timeout_and_network_failures_move_down_the_chain_without_rotation() {
    for (script, failure) in [
        (Script::Status(503, None, "down"), Failure::Server),
        (Script::Timeout, Failure::Timeout),
        (Script::Network, Failure::Network),
        (Script::Broken, Failure::Server),
        (
            Script::Status(404, None, "no such model"),
            Failure::NotFound,
        ),
        (
            Script::Status(409, None, "conflict"),
            Failure::UpstreamClientError,
        ),
    ] {
        let clock = FakeClock::default();
        let w = World::new(&clock, 3, "failover");
        w.upstream.script("m1", std::slice::from_ref(&script));
        let o = w.run("chain");
        assert_eq!(served(&o).1, 1, "{script:?}");
        assert_eq!(failures(&o)[0].1, Some(failure), "{script:?}");
        assert_eq!(w.upstream.keys_used(), ["p1-k1", "p2-k1"], "{script:?}");
    }
}

#[test]
fn when_everything_fails_the_502_lists_each_candidate_in_order_without_upstream_text() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    w.upstream.script(
        "m1",
        &[Script::Status(429, None, "quota exceeded for org-secret")],
    );
    w.upstream
        .script("m2", &[Script::Status(503, None, "upstream stack trace")]);
    // Open m3's breaker first.
    for _ in 0..5 {
        w.upstream
            .script("m3", &[Script::Status(500, None, "boom")]);
        w.run("m3");
    }
    let o = w.run("chain");
    assert!(matches!(o.ending, Ending::Exhausted));
    let body: serde_json::Value = serde_json::from_str(&o.exhausted_error().to_json()).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"error": {
            "type": "api_error",
            "code": "upstream_exhausted",
            "message": "All 3 routing candidates failed.",
            "attempts": [
                {"provider": "p1", "model": "m1", "failure": "rate_limit", "status": 429},
                {"provider": "p2", "model": "m2", "failure": "server", "status": 503},
                {"provider": "p3", "model": "m3", "failure": "breaker_open"}
            ]
        }})
    );
    // The upstream's words are kept for the log line only.
    assert_eq!(
        o.attempts[0].tries[0].error.as_deref(),
        Some("quota exceeded for org-secret")
    );
}

#[test]
fn a_warm_success_costs_one_state_round_trip_and_no_report() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 2, "round_robin");
    let o = w.run("chain");
    assert_eq!(served(&o).1, 0);
    assert_eq!(w.state.round_trips(), 1);
    let Ending::Served { owed_report, .. } = &o.ending else {
        panic!()
    };
    assert!(!owed_report.report.changes_anything());
}

#[test]
fn request_budget_stops_new_attempts_once_spent() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 2, "failover");
    // Each timeout eats the provider's 1000 ms; a 1500 ms budget allows the first call and a
    // truncated second, then nothing more starts.
    w.upstream.script("m1", &[Script::Timeout]);
    w.upstream.script("m2", &[Script::Timeout]);
    let limits = Limits {
        budget_ms: 1_500,
        ..LIMITS
    };
    let o = w.run_with("chain", limits);
    assert!(matches!(o.ending, Ending::Exhausted));
    let calls = w.upstream.calls.borrow().clone();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[1].timeout_ms, 500,
        "the last call gets only what is left"
    );
    assert_eq!(
        failures(&o).iter().map(|f| f.1).collect::<Vec<_>>(),
        [
            Some(Failure::Timeout),
            Some(Failure::Timeout),
            Some(Failure::DeadlineExceeded)
        ]
    );
}

#[test]
fn client_cancel_is_not_a_failure() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 2, "failover");
    w.upstream.script("m1", &[Script::Cancelled]);
    let o = w.run("chain");
    assert!(matches!(o.ending, Ending::Cancelled));
    assert_eq!(
        w.upstream.count(),
        1,
        "no rotation, no cascade after a cancel"
    );
    assert!(
        w.state.reports.borrow().is_empty(),
        "nothing recorded against key or model"
    );
}

#[test]
fn counted_failures_are_reported_and_five_open_the_breaker() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    for _ in 0..5 {
        w.upstream.script("m1", &[Script::Status(503, None, "")]);
        w.run("chain");
    }
    let before = w.upstream.count();
    let o = w.run("chain");
    assert_eq!(
        w.upstream.count() - before,
        1,
        "m1 skipped with zero calls, m2 served"
    );
    assert_eq!(
        failures(&o)[0],
        ("m1".into(), Some(Failure::BreakerOpen), None)
    );
    assert_eq!(served(&o).1, 1);
}

#[test]
fn rate_limited_pool_does_not_count_toward_the_breaker() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    for _ in 0..10 {
        w.upstream.script("m1", &[RATE_LIMITED]);
        w.run("chain");
    }
    m1_breaker_never_counted(&w);
}

#[test]
fn an_oversized_answer_moves_the_cascade_on_and_is_never_counted_by_a_breaker() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 2, "failover");
    for _ in 0..10 {
        w.upstream.script("m1", &[Script::Oversized]);
        let o = w.run("chain");
        assert_eq!(served(&o), ("answer from m2".into(), 1));
        assert_eq!(
            failures(&o)[0],
            ("m1".into(), Some(Failure::Oversized), Some(200))
        );
    }
    // One call per request: the next key would get the same answer, so the pool is not rotated.
    assert_eq!(
        w.upstream
            .keys_used()
            .iter()
            .filter(|k| k.starts_with("p1"))
            .count(),
        10
    );
    m1_breaker_never_counted(&w);
}

/// m1 still serves first and no report to the routing state was a breaker failure.
fn m1_breaker_never_counted(w: &World) {
    let o = w.run("chain");
    assert_eq!(served(&o).1, 0, "m1's breaker is still closed");
    assert!(w
        .state
        .reports
        .borrow()
        .iter()
        .all(|r| !matches!(r.verdict, Verdict::Failure { .. })));
}
