//! Retries and rate limits over fake ports with an injected clock: same-candidate retries, benched credentials,
//! `rpm`, and `Retry-After` on the aggregated 502.

use crate::support::fakes::{FakeClock, Script};
use crate::support::world::{World, LIMITS};
use cognigate::cascade::{exhausted_retry_after_secs, Ending, Failure, Limits, Run};
use cognigate::config::{BreakerSettings, ProviderName, RetryPolicy};
use cognigate::health::Verdict;

const UNAVAILABLE: Script = Script::Status(503, None, "overloaded");

/// The retry and rate-limit settings on the shared world.
trait Resilient {
    fn p1(&mut self) -> &mut cognigate::config::Resilience;
    fn retries(self, max_retries: u32) -> Self;
    fn failure_reports(&self) -> usize;
}

impl Resilient for World<'_> {
    fn p1(&mut self) -> &mut cognigate::config::Resilience {
        let name = ProviderName::parse("p1").unwrap();
        &mut self.cfg.providers.get_mut(&name).unwrap().resilience
    }

    fn retries(mut self, max_retries: u32) -> Self {
        self.p1().retry = RetryPolicy {
            max_retries,
            base_delay_ms: 100,
            max_delay_ms: 2_000,
        };
        self
    }

    fn failure_reports(&self) -> usize {
        let reports = self.state.reports.borrow();
        reports
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Failure { .. }))
            .count()
    }
}

fn depth(o: &Run<String>) -> usize {
    match &o.ending {
        Ending::Served { depth, .. } => *depth,
        other => panic!("expected a served answer, got {other:?}"),
    }
}

fn entries(o: &Run<String>) -> Vec<(String, Option<Failure>, Option<u32>)> {
    o.attempts
        .iter()
        .map(|a| (a.model.clone(), a.failure, a.retry))
        .collect()
}

#[test]
fn a_503_then_200_with_max_retries_1_serves_at_depth_0_with_two_calls_the_second_after_the_delay() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 1, "failover").retries(1);
    w.upstream.script("m1", &[UNAVAILABLE]);
    let o = w.run("chain");
    assert_eq!(depth(&o), 0);
    assert_eq!(w.upstream.count(), 2);
    // 10 ms for the 503, the first retry's full-jitter window (0..=100, the fake draws its top),
    // 10 ms for the 200.
    assert_eq!(clock.0.get(), 1_000 + 10 + 100 + 10);
    assert_eq!(
        entries(&o),
        [
            ("m1".into(), Some(Failure::Server), Some(0)),
            ("m1".into(), None, Some(1))
        ]
    );
}

#[test]
fn without_retry_configured_a_503_moves_down_the_chain_as_in_seed_000() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 1, "failover");
    w.upstream.script("m1", &[UNAVAILABLE]);
    let o = w.run("chain");
    assert_eq!(depth(&o), 1);
    assert_eq!(w.upstream.count(), 2);
    assert_eq!(
        o.attempts[0].retry, None,
        "an attempt that was not a retry has no retry index"
    );
}

#[test]
fn a_request_caused_400_is_still_exactly_one_call_with_retries_on() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 2, "failover").retries(5);
    w.upstream.script(
        "m1",
        &[Script::Status(400, None, r#"{"error":{"message":"bad"}}"#)],
    );
    let o = w.run("chain");
    assert!(matches!(o.ending, Ending::RequestCaused(_)));
    assert_eq!(w.upstream.count(), 1);
}

#[test]
fn a_429_and_a_401_rotate_keys_and_are_never_retried() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 1, "failover").retries(5);
    w.upstream.script(
        "m1",
        &[
            Script::Status(429, None, "slow down"),
            Script::Status(401, None, "no"),
        ],
    );
    let o = w.run("m1");
    assert!(matches!(o.ending, Ending::Exhausted));
    assert_eq!(w.upstream.count(), 1);
    let o = w.run("m1");
    assert!(matches!(o.ending, Ending::Exhausted));
    assert_eq!(w.upstream.count(), 2);
}

#[test]
fn each_try_is_one_attempt_entry_with_its_retry_index_and_one_failure_toward_the_breaker() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 1, "failover").retries(2);
    w.upstream
        .script("m1", &[UNAVAILABLE, Script::Timeout, Script::Network]);
    let o = w.run("m1");
    assert!(matches!(o.ending, Ending::Exhausted));
    assert_eq!(
        entries(&o),
        [
            ("m1".into(), Some(Failure::Server), Some(0)),
            ("m1".into(), Some(Failure::Timeout), Some(1)),
            ("m1".into(), Some(Failure::Network), Some(2)),
        ]
    );
    assert_eq!(w.failure_reports(), 3);
    let err = o.exhausted_error();
    assert_eq!(err.message(), "All 1 routing candidates failed.");
    let retries: Vec<_> = err.attempts().unwrap().iter().map(|a| a.retry).collect();
    assert_eq!(retries, [Some(0), Some(1), Some(2)]);
}

#[test]
fn an_open_breaker_stops_the_retries_at_once() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 1, "failover").retries(5);
    w.upstream.script("m1", &[UNAVAILABLE; 6]);
    let limits = Limits {
        breaker: BreakerSettings {
            error_threshold: 2,
            ..LIMITS.breaker
        },
        ..LIMITS
    };
    let o = w.run_with("m1", limits);
    assert_eq!(
        w.upstream.count(),
        2,
        "the second failure opened the breaker"
    );
    assert_eq!(o.attempts.len(), 2);
}

#[test]
fn retries_never_wait_past_the_request_budget() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 1, "failover").retries(5);
    w.upstream.script("m1", &[UNAVAILABLE; 6]);
    // 10 + 100 + 10 + 200 + 10 = 330 ms spent after two tries; the next backoff (400) would
    // end past a 500 ms budget, so it is not waited for.
    let limits = Limits {
        budget_ms: 500,
        ..LIMITS
    };
    let o = w.run_with("m1", limits);
    assert!(matches!(o.ending, Ending::Exhausted));
    assert_eq!(w.upstream.count(), 3);
    assert!(clock.0.get() - 1_000 <= 500, "{}", clock.0.get());
}

#[test]
fn a_retry_goes_to_the_next_key_of_the_pool() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 3, "failover").retries(2);
    w.upstream.script("m1", &[UNAVAILABLE, UNAVAILABLE]);
    w.run("m1");
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k3"]);
}

#[test]
fn a_401_key_is_benched_for_auth_cooldown_ms_and_skipped_by_the_next_request() {
    let clock = FakeClock(1_000.into());
    let mut w = World::new(&clock, 2, "failover");
    w.p1().auth_cooldown_ms = 5_000;
    w.upstream
        .script("m1", &[Script::Status(401, None, "bad key")]);
    w.run("m1");
    w.run("m1");
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k2"]);
    clock.0.set(1_010 + 5_000);
    w.run("m1");
    assert_eq!(
        w.upstream.keys_used().last().unwrap(),
        "p1-k1",
        "tried again after"
    );
}

#[test]
fn without_auth_cooldown_a_401_key_is_tried_first_again_as_in_seed_000() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 2, "failover");
    w.upstream
        .script("m1", &[Script::Status(401, None, "bad key")]);
    w.run("m1");
    w.run("m1");
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k1"]);
}

#[test]
fn rpm_2_skips_the_provider_on_the_third_request_inside_a_minute_without_a_call() {
    let clock = FakeClock(1_000.into());
    let mut w = World::new(&clock, 1, "failover");
    w.p1().rpm = Some(2);
    for _ in 0..2 {
        assert_eq!(depth(&w.run("chain")), 0);
    }
    let o = w.run("chain");
    assert_eq!(depth(&o), 1);
    assert_eq!(o.attempts[0].failure, Some(Failure::LocalRateLimit));
    assert!(o.attempts[0].tries.is_empty());
    assert_eq!(w.failure_reports(), 0, "not a failure toward the breaker");
    assert_eq!(
        w.upstream
            .calls
            .borrow()
            .iter()
            .filter(|c| c.model == "m1")
            .count(),
        2
    );
    clock.0.set(61_000);
    assert_eq!(depth(&w.run("chain")), 0, "the window slid on");
}

#[test]
fn a_502_whose_candidates_are_all_breaker_open_carries_retry_after_until_the_soonest() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 1, "failover");
    let limits = Limits {
        breaker: BreakerSettings {
            error_threshold: 1,
            ..LIMITS.breaker
        },
        ..LIMITS
    };
    w.upstream.script("m1", &[UNAVAILABLE]);
    w.upstream.script("m2", &[UNAVAILABLE]);
    w.upstream.script("m3", &[UNAVAILABLE]);
    let o = w.run_with("chain", limits);
    assert_eq!(
        exhausted_retry_after_secs(&o.attempts, clock.0.get()),
        None,
        "server failures have no known end"
    );
    clock.advance(1_500);
    let o = w.run_with("chain", limits);
    let failures: Vec<_> = o.attempts.iter().map(|a| a.failure).collect();
    assert_eq!(failures, [Some(Failure::BreakerOpen); 3]);
    // m1 opened first (at 1_010) for 60 s; 1_010 + 60_000 - 2_530 = 58_480 ms → 59 s.
    assert_eq!(
        exhausted_retry_after_secs(&o.attempts, clock.0.get()),
        Some(59)
    );
}

#[test]
fn a_502_with_a_pool_parked_by_retry_after_carries_it_too() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 2, "failover");
    w.upstream.script(
        "m1",
        &[
            Script::Status(429, Some("7"), ""),
            Script::Status(429, Some("30"), ""),
        ],
    );
    let o = w.run("m1");
    assert_eq!(
        exhausted_retry_after_secs(&o.attempts, clock.0.get()),
        Some(7)
    );
}

#[test]
fn an_anthropic_529_is_transient_and_retried_on_the_same_candidate() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 1, "failover").retries(1);
    w.upstream
        .script("m1", &[Script::Status(529, None, "overloaded_error")]);
    let o = w.run("chain");
    assert_eq!(depth(&o), 0);
    assert_eq!(w.upstream.count(), 2);
}
