//! Host tests of escalating breakers: `breaker.open_durations_ms`.

use super::*;
use crate::config::OpenDurations;

fn settings() -> BreakerSettings {
    BreakerSettings {
        error_threshold: 1,
        window_ms: 30_000,
        open_duration_ms: 60_000,
        open_durations_ms: OpenDurations::try_from(vec![1_000, 3_000, 9_000]).unwrap(),
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

fn report(verdict: Verdict, probe: Option<u64>, breaker: BreakerSettings) -> ReportRequest {
    ReportRequest {
        model: "m".into(),
        parks: vec![],
        verdict,
        probe,
        breaker,
        scheduled: None,
    }
}

fn fail() -> Verdict {
    Verdict::Failure {
        reason: "server".into(),
    }
}

/// Lets the probe through at `now` and reports `verdict` for it; the transitions it caused.
fn probe(st: &mut ProviderState, now: u64, verdict: Verdict) -> Vec<ModelTransition> {
    let Gate::Probe { token } = st.acquire(&acquire(), now).admission else {
        panic!("expected a probe at {now}");
    };
    st.report(&report(verdict, Some(token), settings()), now)
}

fn until(st: &ProviderState, now: u64) -> Option<u64> {
    st.not_closed(now).first().and_then(|v| v.breaker_until)
}

#[test]
fn each_failed_probe_reopens_for_the_next_duration_staying_on_the_last() {
    let mut st = ProviderState::default();
    let t = st.report(&report(fail(), None, settings()), 0);
    assert_eq!(t[0].open_ms, Some(1_000), "the trip opens for the first");
    assert_eq!(until(&st, 0), Some(1_000));
    let t = probe(&mut st, 1_000, fail());
    assert_eq!(t[0].open_ms, Some(3_000));
    assert_eq!(until(&st, 1_000), Some(4_000), "about 3 s, not 1 s");
    probe(&mut st, 4_000, fail());
    assert_eq!(until(&st, 4_000), Some(13_000));
    probe(&mut st, 13_000, fail());
    assert_eq!(
        until(&st, 13_000),
        Some(22_000),
        "the last duration repeats"
    );
    assert_eq!(st.health(13_000)[0].open_ms, Some(9_000));
}

#[test]
fn a_successful_probe_closes_and_the_next_trip_starts_at_the_first_duration() {
    let mut st = ProviderState::default();
    st.report(&report(fail(), None, settings()), 0);
    probe(&mut st, 1_000, fail());
    probe(&mut st, 4_000, Verdict::Success);
    assert!(st.not_closed(4_000).is_empty());
    let t = st.report(&report(fail(), None, settings()), 5_000);
    assert_eq!(t[0].open_ms, Some(1_000));
    assert_eq!(until(&st, 5_000), Some(6_000));
}

#[test]
fn without_a_list_every_opening_lasts_open_duration_ms_as_in_seed_000() {
    let mut fixed = settings();
    fixed.open_durations_ms = OpenDurations::SINGLE;
    let mut st = ProviderState::default();
    st.report(&report(fail(), None, fixed), 0);
    let Gate::Probe { token } = st.acquire(&acquire(), 60_000).admission else {
        panic!("probe");
    };
    st.report(&report(fail(), Some(token), fixed), 60_000);
    assert_eq!(until(&st, 60_000), Some(120_000));
}

#[test]
fn a_manual_reset_forgets_the_escalation() {
    let mut st = ProviderState::default();
    st.report(&report(fail(), None, settings()), 0);
    probe(&mut st, 1_000, fail());
    st.reset(None);
    st.report(&report(fail(), None, settings()), 2_000);
    assert_eq!(until(&st, 2_000), Some(3_000));
}
