//! Host tests of one isolate's stats: what a call carries, what its answer does, and what the
//! ranking reads meanwhile.

use super::*;
use crate::health::headroom::Family;
use crate::health::ProviderState;
use crate::routing::stats::stats_book::{BreakerNow, ModelSnapshot, StatsBook};

fn served(ms: u64) -> Sample {
    Sample::Served {
        ttfb_ms: ms,
        latency_ms: Some(ms),
    }
}

/// The object's answer to `push`, folded as of `now`.
fn answer(book: &mut StatsBook, push: &StatsPush, now: u64) -> StatsSnapshot {
    book.fold(push, now);
    book.snapshot(&ProviderState::default(), now)
}

#[test]
fn a_batch_the_object_answered_leaves_pending_and_is_counted_once() {
    let (mut isolate, mut book) = (ProviderStats::default(), StatsBook::default());
    isolate.record("m", served(100), 0);
    let push = isolate.take().unwrap();
    assert!(isolate.pending.is_empty());
    isolate.record("m", served(100), 5);
    assert_eq!(
        isolate.measured("m", 5).unwrap().requests,
        2,
        "in flight still seen"
    );
    isolate.batch_answered(Some(answer(&mut book, &push, 10)));
    assert_eq!(book.models["m"].requests, 1);
    assert_eq!(
        isolate.measured("m", 10).unwrap().requests,
        2,
        "1 folded + 1 pending"
    );
    let push = isolate.take().unwrap();
    isolate.batch_answered(Some(answer(&mut book, &push, 20)));
    assert_eq!(book.models["m"].requests, 2, "none counted twice");
    assert_eq!(isolate.measured("m", 20).unwrap().requests, 2);
}

#[test]
fn a_batch_whose_call_failed_goes_back_to_pending_so_no_outcome_is_lost() {
    let mut isolate = ProviderStats::default();
    isolate.record("m", Sample::Failed { counted: true }, 1_000);
    let _lost = isolate.take().unwrap();
    isolate.record("m", served(10), 3_000);
    isolate.batch_answered(None);
    let m = &isolate.pending["m"];
    assert_eq!((m.requests, m.failures, m.successes), (2, 1, 1));
    assert_eq!(
        isolate.pending_since,
        Some(1_000),
        "as old as its oldest outcome"
    );
    assert!(isolate.flush_due(3_500, 2_000));
    let mut book = StatsBook::default();
    let push = isolate.take().unwrap();
    isolate.batch_answered(Some(answer(&mut book, &push, 4_000)));
    assert_eq!(book.models["m"].requests, 2);
}

#[test]
fn one_call_carries_a_batch_at_a_time_and_a_flush_is_due_only_after_the_interval() {
    let mut isolate = ProviderStats::default();
    assert!(!isolate.flush_due(10_000, 2_000), "nothing pending");
    isolate.record("m", served(10), 1_000);
    assert!(!isolate.flush_due(2_999, 2_000));
    assert!(isolate.flush_due(3_000, 2_000));
    let _first = isolate.take().unwrap();
    isolate.record("m", served(10), 3_000);
    assert!(
        isolate.take().is_none(),
        "one in flight per tenant/provider"
    );
    assert!(!isolate.flush_due(9_000, 2_000));
    isolate.batch_answered(Some(StatsSnapshot::default()));
    assert!(isolate.flush_due(9_000, 2_000));
}

#[test]
fn a_read_without_a_batch_never_installs_an_older_snapshot() {
    let mut isolate = ProviderStats::default();
    isolate.install(StatsSnapshot {
        seq: 5,
        ..StatsSnapshot::default()
    });
    isolate.install(StatsSnapshot {
        seq: 4,
        parked_share: 1.0,
        ..StatsSnapshot::default()
    });
    assert_eq!(isolate.snapshot.seq, 5);
}

#[test]
fn health_reads_breaker_parks_and_rpm_from_the_snapshot() {
    let mut isolate = ProviderStats::default();
    assert_eq!(isolate.health("m", 0), None, "nothing known");
    isolate.install(StatsSnapshot {
        seq: 1,
        models: [(
            "m".to_owned(),
            ModelSnapshot {
                stats: None,
                breaker: Some(BreakerNow {
                    state: BreakerStatus::Open,
                    until: Some(1_000),
                }),
            },
        )]
        .into(),
        parked_share: 0.5,
        rpm_share: 0.25,
        parked: Default::default(),
        headroom: Default::default(),
    });
    let h = isolate.health("m", 500).unwrap();
    assert!(h.breaker_open);
    assert_eq!((h.parked_share, h.rpm_share, h.requests), (0.5, 0.25, 0));
    assert!(
        !isolate.health("m", 1_000).unwrap().breaker_open,
        "open until 1000"
    );
    assert_eq!(isolate.health("other", 500).unwrap().parked_share, 0.5);
}

#[test]
fn only_the_tenants_providers_that_waited_the_interval_are_flushed() {
    let mut stats = IsolateStats::default();
    stats.provider("acme", "p1").record("m", served(100), 0);
    stats.provider("acme", "p2").record("m", served(100), 1_500);
    stats.provider("other", "p1").record("m", served(100), 0);
    let due = stats.take_due("acme", 2_000, 2_000);
    let providers: Vec<&str> = due.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(providers, ["p1"]);
    assert_eq!(due[0].1.batches["m"].requests, 1);
    assert!(
        stats
            .take_due("acme", 4_000, 2_000)
            .iter()
            .all(|(p, _)| p == "p2"),
        "p1's batch is out: none until it is answered"
    );
    assert!(stats.take_due("nobody", 4_000, 2_000).is_empty());
}

fn low(now: u64) -> [Figure; 1] {
    [Figure::read(Family::Requests, 5, Some(100), None, now)]
}

#[test]
fn headroom_figures_ride_the_next_batch_and_are_seen_here_at_once() {
    let mut isolate = ProviderStats::default();
    isolate.saw("a", &low(0), 0);
    assert_eq!(
        isolate.headrooms().headroom("a", 1),
        Some(0.05),
        "seen at once"
    );
    assert_eq!(isolate.health("m", 1).unwrap().headroom, Some(0.05));
    assert!(
        isolate.flush_due(2_000, 2_000),
        "figures alone are sent too"
    );
    let push = isolate.take().unwrap();
    assert_eq!(push.headroom.headroom("a", 1), Some(0.05));
    // The call fails: the figures go with the next batch.
    isolate.answered(true, None);
    assert_eq!(
        isolate.take().unwrap().headroom.headroom("a", 1),
        Some(0.05)
    );
    let mut book = StatsBook::default();
    assert!(
        !book.fold(&push, 1),
        "the object keeps them in memory, with no write"
    );
    let snap = book.snapshot(&ProviderState::default(), 1);
    isolate.answered(true, Some(snap.clone()));
    assert!(isolate.take().unwrap().headroom.is_empty(), "sent once");
    let mut other = ProviderStats::default();
    other.install(snap);
    assert_eq!(
        other.headrooms().headroom("a", 1),
        Some(0.05),
        "another isolate sees them"
    );
}
