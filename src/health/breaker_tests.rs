//! Host tests of the breaker state machine.

use super::*;

const S: BreakerSettings = BreakerSettings {
    error_threshold: 5,
    window_ms: 30_000,
    open_duration_ms: 60_000,
    open_durations_ms: crate::config::OpenDurations::SINGLE,
};
const PROBE_TIMEOUT: u64 = 10_000;

fn fail(b: &mut Breaker, now: u64) -> Option<Transition> {
    b.failure(now, &S, None, "server")
}

fn opened_at(now: u64) -> Breaker {
    let mut b = Breaker::default();
    for i in 0..5 {
        fail(&mut b, now - 4 + i);
    }
    b
}

#[test]
fn threshold_failures_inside_the_window_open_it() {
    let mut b = Breaker::default();
    for t in [0, 1_000, 2_000, 3_000] {
        assert_eq!(fail(&mut b, t), None);
    }
    let opened = fail(&mut b, 29_000);
    assert!(matches!(
        opened,
        Some(Transition::Opened {
            breaker_until: 89_000,
            ..
        })
    ));
    assert_eq!(b, Breaker::Open { until: 89_000 });
}

#[test]
fn failures_spread_wider_than_the_window_never_open_it() {
    let mut b = Breaker::default();
    // One failure every 7.5 s: never five inside 30 s, for hours.
    for i in 0..2_000u64 {
        assert_eq!(fail(&mut b, i * 7_500), None);
    }
    assert!(b.is_closed());
}

#[test]
fn open_skips_with_its_until() {
    let mut b = opened_at(1_000);
    assert_eq!(
        b.admit(30_000, PROBE_TIMEOUT, 1),
        Gate::Skip {
            until: Some(61_000)
        }
    );
}

#[test]
fn half_open_admits_exactly_one_probe() {
    let mut b = opened_at(1_000);
    assert_eq!(b.admit(61_000, PROBE_TIMEOUT, 7), Gate::Probe { token: 7 });
    for t in 0..20 {
        assert_eq!(
            b.admit(61_001 + t, PROBE_TIMEOUT, 8 + t),
            Gate::Skip { until: None }
        );
    }
}

#[test]
fn probe_success_closes_outright_and_clears_the_window() {
    let mut b = opened_at(1_000);
    let Gate::Probe { token } = b.admit(61_000, PROBE_TIMEOUT, 7) else {
        panic!("expected a probe")
    };
    assert!(matches!(
        b.success(Some(token)),
        Some(Transition::Closed { .. })
    ));
    assert_eq!(b, Breaker::default());
    // Four fresh failures do not re-open it: nothing carried over.
    for t in 0..4 {
        assert_eq!(fail(&mut b, 61_100 + t), None);
    }
}

#[test]
fn probe_failure_reopens_at_once_for_a_full_duration() {
    let mut b = opened_at(1_000);
    let Gate::Probe { token } = b.admit(61_000, PROBE_TIMEOUT, 7) else {
        panic!("expected a probe")
    };
    let t = b.failure(62_000, &S, Some(token), "timeout");
    assert!(matches!(
        t,
        Some(Transition::Opened {
            breaker_until: 122_000,
            ..
        })
    ));
    assert_eq!(
        b.admit(121_999, PROBE_TIMEOUT, 8),
        Gate::Skip {
            until: Some(122_000)
        }
    );
}

#[test]
fn lost_probe_is_released_after_its_timeout() {
    let mut b = opened_at(1_000);
    assert_eq!(b.admit(61_000, PROBE_TIMEOUT, 7), Gate::Probe { token: 7 });
    assert_eq!(
        b.admit(70_999, PROBE_TIMEOUT, 8),
        Gate::Skip { until: None }
    );
    assert_eq!(b.admit(71_000, PROBE_TIMEOUT, 9), Gate::Probe { token: 9 });
    // The lost probe's late verdict no longer counts.
    assert_eq!(b.success(Some(7)), None);
}

#[test]
fn released_probe_lets_the_next_request_probe() {
    let mut b = opened_at(1_000);
    b.admit(61_000, PROBE_TIMEOUT, 7);
    b.release(Some(7), 61_500);
    assert_eq!(b.admit(61_500, PROBE_TIMEOUT, 8), Gate::Probe { token: 8 });
}

#[test]
fn a_streaming_probe_that_keeps_renewing_is_held_past_its_first_deadline() {
    let mut b = opened_at(1_000);
    b.admit(61_000, PROBE_TIMEOUT, 7);
    // Renewed every half timeout, for far longer than one timeout.
    for t in (66_000..200_000).step_by(5_000) {
        assert!(b.hold(7, t, PROBE_TIMEOUT));
        assert_eq!(b.admit(t + 1, PROBE_TIMEOUT, 8), Gate::Skip { until: None });
    }
    // Once the renewals stop (last at 196 000), the deadline releases it as before.
    assert_eq!(
        b.admit(205_999, PROBE_TIMEOUT, 9),
        Gate::Skip { until: None }
    );
    assert_eq!(b.admit(206_000, PROBE_TIMEOUT, 9), Gate::Probe { token: 9 });
}

#[test]
fn a_renewal_from_a_probe_that_is_no_longer_the_probe_changes_nothing() {
    let mut b = opened_at(1_000);
    b.admit(61_000, PROBE_TIMEOUT, 7);
    assert!(!b.hold(6, 62_000, PROBE_TIMEOUT), "not the probe");
    b.release(Some(7), 62_000);
    assert!(!b.hold(7, 62_000, PROBE_TIMEOUT), "already released");
    b.admit(62_000, PROBE_TIMEOUT, 8);
    assert!(b.success(Some(8)).is_some());
    assert!(!b.hold(8, 62_001, PROBE_TIMEOUT), "already closed");
    assert_eq!(b, Breaker::default());
}

#[test]
fn quiet_means_no_counted_failure_inside_the_window() {
    let mut b = Breaker::default();
    assert!(b.is_quiet(0, S.window_ms));
    fail(&mut b, 1_000);
    assert!(!b.is_quiet(30_999, S.window_ms));
    assert!(b.is_quiet(31_000, S.window_ms), "the failure aged out");
    assert!(!opened_at(1_000).is_quiet(100_000, S.window_ms));
}

#[test]
fn times_saturate_at_the_largest_safe_integer() {
    let mut b = Breaker::default();
    let s = BreakerSettings {
        error_threshold: 1,
        open_duration_ms: u64::MAX,
        open_durations_ms: crate::config::OpenDurations::SINGLE,
        ..S
    };
    b.failure(5, &s, None, "server");
    assert_eq!(
        b,
        Breaker::Open {
            until: crate::health::MAX_SAFE_MS
        }
    );
}

#[test]
fn late_failure_from_a_non_probe_changes_nothing_while_open() {
    let mut b = opened_at(1_000);
    assert_eq!(fail(&mut b, 2_000), None);
    assert_eq!(b, Breaker::Open { until: 61_000 });
}

#[test]
fn reset_closes_and_reports_only_real_transitions() {
    let mut b = opened_at(1_000);
    assert!(matches!(b.reset("manual"), Some(Transition::Closed { .. })));
    assert_eq!(b.reset("manual"), None);
}
