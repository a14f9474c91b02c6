//! Degraded mode over fake ports with an injected clock: while a tenant is degraded the cascade spends
//! no attempt on a candidate whose breaker is open, even past its open duration, and leaves the
//! half-open slot untaken for the scheduled probe.

use crate::support::fakes::{FakeClock, Script};
use crate::support::world::{World, LIMITS};
use cognigate::cascade::{Ending, Failure, Limits};
use cognigate::config::{BreakerSettings, KeyStrategy};
use cognigate::health::{AcquireRequest, Gate};

const LIMITS_1: Limits = Limits {
    breaker: BreakerSettings {
        error_threshold: 1,
        open_duration_ms: 1_000,
        ..LIMITS.breaker
    },
    ..LIMITS
};

/// m1's breaker tripped, and now past its open duration (half-open).
fn half_open(clock: &FakeClock) -> World<'_> {
    let w = World::new(clock, 1, "failover");
    w.upstream
        .script("m1", &[Script::Status(503, None, "overloaded")]);
    w.run_with("m1", LIMITS_1);
    assert_eq!(w.upstream.count(), 1);
    clock.advance(1_000);
    w
}

#[test]
fn while_degraded_a_half_open_candidate_costs_no_call_and_the_next_one_serves() {
    let clock = FakeClock(1_000.into());
    let w = half_open(&clock);
    let o = w.run_with(
        "chain",
        Limits {
            degraded: true,
            ..LIMITS_1
        },
    );
    assert!(matches!(o.ending, Ending::Served { depth: 1, .. }));
    assert_eq!(o.attempts[0].failure, Some(Failure::BreakerOpen));
    assert_eq!(w.upstream.count(), 2, "m1 not called, m2 served");
    // The slot was never taken: the scheduled probe takes it at once.
    let probe = AcquireRequest {
        model: cognigate::config::ModelId::parse("m1").unwrap(),
        keys: vec!["p1-k1".into()],
        strategy: KeyStrategy::Failover,
        probe_timeout_ms: 60_000,
        lease_ms: 0,
        window_ms: 30_000,
        rpm: None,
        leave_probe: false,
    };
    let mut providers = w.state.providers.borrow_mut();
    let lease = providers
        .get_mut("p1")
        .unwrap()
        .acquire_probe(&probe, clock.0.get());
    assert!(matches!(lease.admission, Gate::Probe { .. }));
}

#[test]
fn when_not_degraded_the_request_is_the_probe_as_in_seed_000() {
    let clock = FakeClock(1_000.into());
    let w = half_open(&clock);
    let o = w.run_with("chain", LIMITS_1);
    assert!(matches!(o.ending, Ending::Served { depth: 0, .. }));
    assert_eq!(w.upstream.count(), 2, "m1 probed and served");
}
