//! Host tests of the routing object's stats: folding isolates' batches, the snapshot it answers,
//! and the messages old and new sides exchange.

use super::*;
use crate::config::{BreakerSettings, KeyStrategy};
use crate::health::provider_state::{Park, ReportRequest, Verdict};
use crate::routing::stats::model_stats::Sample;
use serde_json::json;

const S: BreakerSettings = BreakerSettings {
    error_threshold: 1,
    window_ms: 1_000,
    open_duration_ms: 5_000,
    open_durations_ms: crate::config::OpenDurations::SINGLE,
};

fn acquire(model: &str, rpm: Option<u32>) -> AcquireRequest {
    AcquireRequest {
        model: model.into(),
        keys: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        strategy: KeyStrategy::Failover,
        probe_timeout_ms: 1_000,
        lease_ms: 0,
        window_ms: S.window_ms,
        rpm,
        leave_probe: false,
    }
}

fn push(model: &str, samples: &[Sample]) -> StatsPush {
    let mut batch = OutcomeBatch::default();
    for s in samples {
        batch.add(*s);
    }
    StatsPush {
        batches: [(model.to_owned(), batch)].into(),
        ..StatsPush::default()
    }
}

fn served(ms: u64) -> Sample {
    Sample::Served {
        ttfb_ms: ms,
        latency_ms: Some(ms),
    }
}

#[test]
fn batches_of_two_isolates_meet_in_one_book_and_only_a_batch_with_outcomes_is_stored() {
    let mut book = StatsBook::default();
    assert!(!book.fold(&StatsPush::default(), 0), "nothing to store");
    assert!(
        !book.fold(&push("m", &[]), 0),
        "an empty batch changes nothing"
    );
    assert!(book.fold(
        &push("m", &[served(300), Sample::Failed { counted: true }]),
        1_000
    ));
    assert!(book.fold(&push("m", &[served(300)]), 2_000));
    let m = &book.models["m"];
    assert_eq!((m.requests, m.successes, m.failures), (3, 2, 1));
    assert_eq!(m.latency_ms, Some(300.0));
    assert_eq!(book.seq, 2);
}

#[test]
fn the_snapshot_carries_only_models_with_stats_or_a_breaker_not_closed() {
    let mut st = ProviderState::default();
    let mut book = StatsBook::default();
    book.fold(&push("measured", &[served(10)]), 0);
    let _ = st.acquire(&acquire("quiet", None), 0);
    st.report(
        &ReportRequest {
            model: "broken".into(),
            parks: Vec::new(),
            verdict: Verdict::Failure {
                reason: "server".into(),
            },
            probe: None,
            breaker: S,
            scheduled: None,
        },
        100,
    );
    let snap = book.snapshot(&st, 200);
    assert_eq!(
        snap.models.keys().collect::<Vec<_>>(),
        ["broken", "measured"]
    );
    assert_eq!(
        snap.models["broken"].breaker,
        Some(BreakerNow {
            state: BreakerStatus::Open,
            until: Some(5_100)
        })
    );
    assert!(snap.models["broken"].stats.is_none());
    assert_eq!(snap.models["measured"].breaker, None);
    // Past its open duration it is half-open, with no end.
    let later = book.snapshot(&st, 6_000);
    assert_eq!(
        later.models["broken"].breaker,
        Some(BreakerNow {
            state: BreakerStatus::HalfOpen,
            until: None
        })
    );
}

#[test]
fn parked_share_is_the_share_of_keys_parked_now_and_rpm_share_the_minute_used() {
    let mut st = ProviderState::default();
    let mut book = StatsBook::default();
    let req = acquire("m", Some(10));
    book.note_pool(&req);
    for t in [0, 10, 20] {
        let _ = st.acquire(&req, t);
    }
    st.report(
        &ReportRequest {
            model: "m".into(),
            parks: vec![Park {
                key: "a".into(),
                until: 30_000,
            }],
            verdict: Verdict::Neutral,
            probe: None,
            breaker: S,
            scheduled: None,
        },
        30,
    );
    let snap = book.snapshot(&st, 1_000);
    assert_eq!(snap.parked_share, 0.25, "1 of 4 keys");
    assert!((snap.rpm_share - 0.3).abs() < 1e-9, "3 of 10 in the minute");
    let snap = book.snapshot(&st, 61_000);
    assert_eq!(
        (snap.parked_share, snap.rpm_share),
        (0.0, 0.0),
        "all lapsed"
    );
    book.note_pool(&acquire("m", None));
    assert_eq!(book.snapshot(&st, 1_000).rpm_share, 0.0, "no rpm, no share");
}

#[test]
fn an_older_isolate_and_an_older_object_still_understand_each_other() {
    let req = acquire("m", None);
    // An old isolate's acquire: no `stats`, and it is answered a plain lease.
    let old: AcquireCall = serde_json::from_value(serde_json::to_value(&req).unwrap()).unwrap();
    assert_eq!((old.acquire, old.stats), (req.clone(), None));
    let mut st = ProviderState::default();
    let lease = st.acquire(&req, 0);
    let answer = AcquireAnswer {
        lease: lease.clone(),
        stats: Some(StatsSnapshot::default()),
    };
    let text = serde_json::to_string(&answer).unwrap();
    let as_old: Lease = serde_json::from_str(&text).unwrap();
    assert_eq!(
        as_old, lease,
        "an old isolate reads the lease and ignores the rest"
    );
    // An old object's answer to a new isolate: a lease without a snapshot.
    let from_old: AcquireAnswer =
        serde_json::from_str(&serde_json::to_string(&lease).unwrap()).unwrap();
    assert_eq!((from_old.lease, from_old.stats), (lease, None));
    let stored: StatsBook = serde_json::from_str("{}").unwrap();
    assert_eq!(stored, StatsBook::default());
}

#[test]
fn a_report_answer_is_read_from_an_older_object_and_a_newer_one() {
    let plain: ReportAnswer = serde_json::from_str("[]").unwrap();
    assert_eq!((plain.transitions(), plain.stats()), (Vec::new(), None));
    let with: ReportAnswer =
        serde_json::from_value(json!({"transitions": [], "stats": {"seq": 3}})).unwrap();
    assert_eq!(with.stats().map(|s| s.seq), Some(3));
    let report = ReportRequest {
        model: "m".into(),
        parks: Vec::new(),
        verdict: Verdict::Neutral,
        probe: None,
        breaker: S,
        scheduled: None,
    };
    let push = StatsPush::default();
    let sent = serde_json::to_string(&ReportCall {
        report: &report,
        stats: Some(&push),
    })
    .unwrap();
    let read = crate::health::wire::read_report(&sent).unwrap().report;
    assert_eq!(read, report, "an older object reads the report as before");
    let stats: ReportStats = serde_json::from_str(&sent).unwrap();
    assert_eq!(stats.stats, Some(push));
}
