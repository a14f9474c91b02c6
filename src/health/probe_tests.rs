//! Host tests of scheduled probes: the one-probe rule holds between a scheduled probe
//! and user requests, both ways, with an injected clock.

use super::*;
use crate::config::OpenDurations;

fn settings() -> BreakerSettings {
    BreakerSettings {
        error_threshold: 1,
        window_ms: 30_000,
        open_duration_ms: 60_000,
        open_durations_ms: OpenDurations::try_from(vec![1_000, 5_000]).unwrap(),
    }
}

fn acquire() -> AcquireRequest {
    AcquireRequest {
        model: "m".into(),
        keys: vec!["a".into()],
        strategy: KeyStrategy::Failover,
        probe_timeout_ms: 500,
        lease_ms: 0,
        window_ms: 30_000,
        rpm: None,
        leave_probe: false,
    }
}

fn report(verdict: Verdict, probe: Option<u64>) -> ReportRequest {
    ReportRequest {
        model: "m".into(),
        parks: vec![],
        verdict,
        probe,
        breaker: settings(),
        scheduled: None,
    }
}

fn fail() -> Verdict {
    Verdict::Failure {
        reason: "server".into(),
    }
}

/// A breaker tripped at 0, open until 1,000.
fn tripped() -> ProviderState {
    let mut st = ProviderState::default();
    st.report(&report(fail(), None), 0);
    st
}

fn token(lease: &Lease) -> Option<u64> {
    match lease.admission {
        Gate::Probe { token } => Some(token),
        _ => None,
    }
}

#[test]
fn a_scheduled_probe_in_flight_blocks_user_probes() {
    let mut st = tripped();
    let scheduled = st.acquire_probe(&acquire(), 1_000);
    assert!(
        token(&scheduled).is_some(),
        "due: the scheduled pass probes"
    );
    assert_eq!(scheduled.keys, vec![KeyId::from("a")]);
    let user = st.acquire(&acquire(), 1_100);
    assert_eq!(user.admission, Gate::Skip { until: None });
    assert!(user.keys.is_empty(), "zero upstream calls");
}

#[test]
fn a_user_probe_in_flight_blocks_the_scheduled_probe() {
    let mut st = tripped();
    assert!(token(&st.acquire(&acquire(), 1_000)).is_some());
    let scheduled = st.acquire_probe(&acquire(), 1_100);
    assert_eq!(scheduled.admission, Gate::Skip { until: None });
    assert!(scheduled.keys.is_empty());
}

#[test]
fn a_scheduled_probe_is_never_sent_before_the_open_duration_or_to_a_closed_breaker() {
    let mut st = tripped();
    assert_eq!(
        st.acquire_probe(&acquire(), 999).admission,
        Gate::Skip { until: Some(1_000) }
    );
    let mut closed = ProviderState::default();
    let lease = closed.acquire_probe(&acquire(), 5_000);
    assert_eq!(lease.admission, Gate::Skip { until: None });
    assert!(lease.keys.is_empty());
}

#[test]
fn a_successful_scheduled_probe_closes_the_breaker() {
    let mut st = tripped();
    let probe = token(&st.acquire_probe(&acquire(), 1_000));
    let t = st.report(&report(Verdict::Success, probe), 1_200);
    assert!(matches!(t[0].transition, Transition::Closed { .. }));
    assert_eq!(st.acquire(&acquire(), 1_300).admission, Gate::Pass);
}

#[test]
fn a_failed_scheduled_probe_reopens_for_the_next_escalating_duration() {
    let mut st = tripped();
    let probe = token(&st.acquire_probe(&acquire(), 1_000));
    let t = st.report(&report(fail(), probe), 1_200);
    assert_eq!(t[0].open_ms, Some(5_000));
    assert_eq!(
        st.not_closed(1_200)[0].breaker_until,
        Some(6_200),
        "the second duration, not the first"
    );
}

#[test]
fn a_scheduled_probe_that_never_reports_is_released_at_its_deadline() {
    let mut st = tripped();
    assert!(token(&st.acquire_probe(&acquire(), 1_000)).is_some());
    assert!(token(&st.acquire(&acquire(), 1_499)).is_none());
    assert!(token(&st.acquire(&acquire(), 1_500)).is_some());
}

#[test]
fn a_degraded_request_leaves_the_due_probe_to_the_scheduled_pass() {
    let mut st = tripped();
    let leave = AcquireRequest {
        leave_probe: true,
        ..acquire()
    };
    let lease = st.acquire(&leave, 1_000);
    assert_eq!(lease.admission, Gate::Skip { until: None });
    assert!(lease.keys.is_empty(), "zero upstream calls");
    assert!(
        token(&st.acquire_probe(&acquire(), 1_000)).is_some(),
        "the slot was not taken"
    );
    // Not yet due, or closed: as without it.
    let mut st = tripped();
    assert_eq!(
        st.acquire(&leave, 999).admission,
        Gate::Skip { until: Some(1_000) }
    );
    assert_eq!(
        ProviderState::default().acquire(&leave, 0).admission,
        Gate::Pass
    );
}

#[test]
fn only_a_scheduled_probes_report_enters_the_probe_record_and_a_users_probe_does_not() {
    let mut st = tripped();
    let lease = st.acquire(&acquire(), 1_000);
    st.report(&report(Verdict::Success, token(&lease)), 1_050);
    assert_eq!(
        st.pass_view(1_050).probes,
        None,
        "a user's probe is traffic"
    );
    let mut st = tripped();
    let lease = st.acquire_probe(&acquire(), 1_000);
    let mut scheduled = report(fail(), token(&lease));
    scheduled.scheduled = Some(ScheduledProbe { at: 1_000, ms: 40 });
    st.report(&scheduled, 1_040);
    let record = st.pass_view(1_040).probes.expect("recorded");
    assert!(!record.reachable);
    assert_eq!((record.last_probe_at, record.last_probe_ms), (1_000, 40));
    assert_eq!(record.consecutive_failures, 1);
}

#[test]
fn a_scheduled_probe_answered_429_leaves_the_provider_reachable_and_counts_no_failure() {
    let mut st = tripped();
    let lease = st.acquire_probe(&acquire(), 1_000);
    let mut limited = report(Verdict::Neutral, token(&lease));
    limited.scheduled = Some(ScheduledProbe { at: 1_000, ms: 12 });
    st.report(&limited, 1_012);
    let record = st.pass_view(1_012).probes.expect("recorded");
    assert!(record.reachable, "the provider answered");
    assert_eq!(record.consecutive_failures, 0);
}
