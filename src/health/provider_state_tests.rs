//! Host tests of `ProviderState`: admission, grants, reports, reset and storage.

use super::*;

const S: BreakerSettings = BreakerSettings {
    error_threshold: 2,
    window_ms: 1_000,
    open_duration_ms: 5_000,
    open_durations_ms: crate::config::OpenDurations::SINGLE,
};

fn acquire(model: &str) -> AcquireRequest {
    AcquireRequest {
        model: model.into(),
        keys: vec!["a".into(), "b".into()],
        strategy: KeyStrategy::Failover,
        probe_timeout_ms: 1_000,
        lease_ms: 0,
        window_ms: S.window_ms,
        rpm: None,
        leave_probe: false,
    }
}

#[test]
fn grants_are_given_only_when_asked_for_and_quiet() {
    let mut st = ProviderState::default();
    assert_eq!(
        st.acquire(&acquire("m"), 0).grant,
        None,
        "strict unless a lease is configured"
    );
    let leased = AcquireRequest {
        lease_ms: 250,
        ..acquire("m")
    };
    let g = st.acquire(&leased, 10).grant.unwrap();
    assert_eq!((g.until, g.block), (260, GRANT_BLOCK));
    // One failure on record: not quiet, no grant.
    st.report(&failure("m"), 20);
    assert_eq!(st.acquire(&leased, 30).grant, None);
    assert!(st
        .acquire(
            &AcquireRequest {
                model: "other".into(),
                ..leased.clone()
            },
            30
        )
        .grant
        .is_some());
    // A parked key: no grant for any model of the pool.
    st.report(
        &ReportRequest {
            parks: vec![Park {
                key: "a".into(),
                until: 5_000,
            }],
            verdict: Verdict::Neutral,
            ..failure("other")
        },
        40,
    );
    assert_eq!(
        st.acquire(
            &AcquireRequest {
                model: "other".into(),
                ..leased
            },
            50
        )
        .grant,
        None
    );
}

#[test]
fn a_grant_reserves_a_block_of_round_robin_positions() {
    let mut st = ProviderState::default();
    let rr = AcquireRequest {
        lease_ms: 250,
        strategy: KeyStrategy::RoundRobin,
        ..acquire("m")
    };
    let g1 = st.acquire(&rr, 0).grant.unwrap();
    let g2 = st.acquire(&rr, 0).grant.unwrap();
    assert_eq!(g2.cursor, g1.cursor + GRANT_BLOCK + 1);
}

fn failure(model: &str) -> ReportRequest {
    ReportRequest {
        model: model.into(),
        parks: vec![],
        verdict: Verdict::Failure {
            reason: "server".into(),
        },
        probe: None,
        breaker: S,
        scheduled: None,
    }
}

#[test]
fn one_models_outage_leaves_the_providers_other_models_in_rotation() {
    let mut st = ProviderState::default();
    st.report(&failure("down"), 0);
    let t = st.report(&failure("down"), 1);
    assert_eq!(t.len(), 1);
    assert!(matches!(
        st.acquire(&acquire("down"), 2).admission,
        Gate::Skip { .. }
    ));
    assert_eq!(st.acquire(&acquire("up"), 2).admission, Gate::Pass);
    assert_eq!(st.acquire(&acquire("up"), 2).keys, ["a", "b"]);
}

#[test]
fn skipped_candidate_gets_no_keys() {
    let mut st = ProviderState::default();
    st.report(&failure("m"), 0);
    st.report(&failure("m"), 0);
    assert!(st.acquire(&acquire("m"), 1).keys.is_empty());
}

#[test]
fn success_outside_a_probe_is_not_worth_sending() {
    let r = ReportRequest {
        verdict: Verdict::Success,
        ..failure("m")
    };
    assert!(!r.changes_anything());
    assert!(failure("m").changes_anything());
}

#[test]
fn health_view_lists_open_with_until_and_half_open_without() {
    let mut st = ProviderState::default();
    st.report(&failure("m"), 0);
    st.report(&failure("m"), 0);
    assert_eq!(
        st.not_closed(1),
        [BreakerView {
            model: "m".into(),
            state: BreakerStatus::Open,
            breaker_until: Some(5_000)
        }]
    );
    assert_eq!(st.not_closed(5_000)[0].state, BreakerStatus::HalfOpen);
}

#[test]
fn state_round_trips_through_storage_json() {
    let mut st = ProviderState::default();
    st.report(
        &ReportRequest {
            parks: vec![Park {
                key: "a".into(),
                until: 9_000,
            }],
            ..failure("m")
        },
        0,
    );
    let json = serde_json::to_string(&st).unwrap();
    let back: ProviderState = serde_json::from_str(&json).unwrap();
    assert_eq!(back.parked_until("a"), Some(9_000));
    assert_eq!(back.breakers, st.breakers);
}

#[test]
fn one_old_failure_stops_keeping_grants_away_once_it_ages_out_of_the_window() {
    let mut st = ProviderState::default();
    let leased = AcquireRequest {
        lease_ms: 250,
        ..acquire("m")
    };
    st.report(&failure("m"), 0);
    assert_eq!(st.acquire(&leased, 999).grant, None, "inside the window");
    assert!(
        st.acquire(&leased, 1_000).grant.is_some(),
        "quiet means no counted failure inside the window"
    );
    let old_client = AcquireRequest {
        window_ms: u64::MAX,
        ..leased
    };
    assert_eq!(st.acquire(&old_client, 1_000).grant, None);
}

#[test]
fn reset_frees_every_parked_key_of_the_provider_as_well_as_its_breakers() {
    let mut st = ProviderState::default();
    st.report(
        &ReportRequest {
            parks: vec![Park {
                key: "a".into(),
                until: 3_600_000,
            }],
            verdict: Verdict::Neutral,
            ..failure("m")
        },
        0,
    );
    assert_eq!(st.acquire(&acquire("m"), 1).keys, ["b"]);
    st.reset(Some("other-model"));
    assert_eq!(st.parked_until("a"), None);
    assert_eq!(st.acquire(&acquire("m"), 2).keys, ["a", "b"]);
}

#[test]
fn a_streaming_probe_is_held_while_renewed_and_no_second_probe_gets_in() {
    let mut st = ProviderState::default();
    st.report(&failure("m"), 0);
    st.report(&failure("m"), 0);
    let Gate::Probe { token } = st.acquire(&acquire("m"), 5_000).admission else {
        panic!("expected the probe")
    };
    // probe_timeout_ms is 1 000; the stream renews every 500 ms for 10 s.
    for t in (5_500..15_000).step_by(500) {
        assert!(st.hold(&"m".into(), token, t, 1_000));
        assert!(matches!(
            st.acquire(&acquire("m"), t + 1).admission,
            Gate::Skip { .. }
        ));
    }
    assert!(!st.hold(&"other".into(), token, 15_000, 1_000));
}
