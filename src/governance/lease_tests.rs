//! A reservation lasts as long as its request: renewals, with time passed in.

use super::*;
use crate::config::Period;
use crate::governance::admission_tests::{budget, req, served, T0};
use crate::governance::refusals::{Admission, Denial};
use crate::governance::reserve::Need;
use crate::governance::slice::{SliceReturn, SLICE_LEASE_MS};

/// The lifetime of every hold here: a 60 s request budget and the 10 s margin.
const LIFE: u64 = 70_000;
/// Half a lifetime would be 35 s: a stream renews every 30 s at most.
const EVERY: u64 = MAX_RENEW_INTERVAL_MS;

fn ask(id: &str, usd: f64) -> AdmitRequest {
    AdmitRequest {
        request_id: Some(id.into()),
        need: Need { tokens: 10, usd },
        release_after_ms: LIFE,
        key_budget: budget(1.0, Period::Day),
        ..req("k")
    }
}

fn refused() -> Admission {
    Admission::Deny {
        denial: Denial::KeyBudget,
        retry_after_secs: None,
    }
}

#[test]
fn a_running_request_that_renews_keeps_its_hold_past_its_first_lifetime() {
    let mut l = Ledger::default();
    let first = ask("a", 1.0);
    assert_eq!(l.admit(&first, T0), Admission::Admit);
    let mut lease = HoldLease::of(&first, &first.need.hold_ref("a"), T0).unwrap();
    // The first renewal is due at half the lifetime, or 30 s, whichever is sooner.
    assert_eq!(lease.due_at(), Some(T0 + EVERY));
    let mut now = T0;
    while now < T0 + 3 * LIFE {
        now = lease.due_at().unwrap();
        assert!(l.renew(lease.request(), now), "renewed at {}", now - T0);
        lease.answered(true, now);
        assert_eq!(l.admit(&ask("b", 0.1), now + 1), refused());
    }
    assert!(l.take_released().is_empty(), "no timer released it");
    // It ends: its settle replaces the hold, and nothing is held any longer.
    let mut done = served("k", None, 10, 0.2);
    done.record.request_id = "a".into();
    done.hold = Some(first.need.hold_ref("a"));
    l.settle(&done, now + 2);
    assert_eq!(l.admit(&ask("c", 0.1), now + 3), Admission::Admit);
    assert!(
        !l.renew(lease.request(), now + 4),
        "a settled hold is not renewed"
    );
}

#[test]
fn a_request_that_stops_renewing_is_released_one_lifetime_after_its_last_renewal() {
    let mut l = Ledger::default();
    let first = ask("a", 1.0);
    assert_eq!(l.admit(&first, T0), Admission::Admit);
    let lease = HoldLease::of(&first, &first.need.hold_ref("a"), T0).unwrap();
    let at = T0 + LIFE / 2;
    assert!(l.renew(lease.request(), at));
    assert_eq!(l.admit(&ask("b", 0.1), at + LIFE - 1), refused());
    assert_eq!(l.admit(&ask("c", 0.1), at + LIFE), Admission::Admit);
    assert_eq!(l.take_released().len(), 1);
    // Too late: the ledger says so and the request stops asking.
    assert!(!l.renew(lease.request(), at + LIFE + 1));
}

#[test]
fn a_stream_admitted_from_a_slice_keeps_the_slice_held_past_its_return() {
    let mut l = Ledger::default();
    // A big budget: the first call grants a slice, which admits the stream locally.
    let big = AdmitRequest {
        key_budget: budget(100.0, Period::Day),
        slice_id: Some("s1".into()),
        request_id: None,
        ..ask("x", 0.01)
    };
    let grant = l.acquire(&big, T0).slice.unwrap();
    let hold = HoldRef {
        id: grant.id.clone(),
        requests: 1,
        tokens: 10,
        usd: 0.01,
    };
    let lease = HoldLease::of(&big, &hold, T0 + 1).unwrap();
    // Retired at its lease: everything but the stream's part goes back.
    let allowance = grant.allowance;
    let back = SliceReturn {
        id: grant.id.clone(),
        scopes: big.scopes(),
        unused_requests: allowance.requests - 1,
        unused_tokens: 0,
        unused_usd: allowance.usd.unwrap() - 0.01,
    };
    let returns = AdmitRequest {
        returns: vec![back],
        slice_id: None,
        ..big.clone()
    };
    l.acquire(&returns, T0 + SLICE_LEASE_MS);
    let held = |l: &Ledger| l.scopes[&ScopeId::Key("k".into())].holds.usd();
    assert!((held(&l) - 0.01).abs() < 1e-12);
    let mut now = T0;
    for _ in 0..4 {
        now = lease.due_at().unwrap().max(now + LIFE / 2);
        assert!(l.renew(lease.request(), now));
        l.acquire(&returns_none(&big), now + LIFE - 1);
        assert!((held(&l) - 0.01).abs() < 1e-12, "still held {}", now - T0);
    }
    assert!(l.take_released().is_empty());
}

fn returns_none(a: &AdmitRequest) -> AdmitRequest {
    AdmitRequest {
        slice_id: None,
        request_id: None,
        returns: Vec::new(),
        ..a.clone()
    }
}

#[test]
fn only_a_hold_that_a_limit_reads_is_renewed() {
    let rpm_only = AdmitRequest {
        key_rpm: Some(10),
        key_budget: None,
        ..ask("a", 0.0)
    };
    // Admitted by the ledger: its request counted at admission; the hold's tokens and money
    // count toward no limit, so a stream of it makes no renewal call.
    assert!(HoldLease::of(&rpm_only, &rpm_only.need.hold_ref("a"), T0).is_none());
    // Admitted from a slice: it counts toward rpm when it settles, so it is renewed.
    let from_slice = HoldRef {
        id: "s".into(),
        requests: 1,
        tokens: 0,
        usd: 0.0,
    };
    assert!(HoldLease::of(&rpm_only, &from_slice, T0).is_some());
    let tpm = AdmitRequest {
        key_tpm: Some(1_000),
        ..rpm_only
    };
    assert!(HoldLease::of(&tpm, &tpm.need.hold_ref("a"), T0).is_some());
}

#[test]
fn a_failed_renewal_is_tried_again_until_the_hold_would_have_lapsed() {
    let first = ask("a", 1.0);
    let mut lease = HoldLease::of(&first, &first.need.hold_ref("a"), T0).unwrap();
    let until = T0 + LIFE;
    let mut now = lease.due_at().unwrap();
    let mut tries = 1;
    loop {
        lease.failed(now);
        match lease.state() {
            Lease::Held { next, until: u } => {
                assert_eq!(u, until);
                assert!(next > now && next < until, "{next} after {now}");
                now = next;
                tries += 1;
            }
            Lease::Gone => break,
        }
    }
    // Every LIFE/8 from the first, the last just before the hold lapses.
    assert_eq!(tries, 6, "tries");
    assert!(now >= until - LIFE / 8);
    assert_eq!(lease.due_at(), None);
    // A renewal the ledger answered moves the whole schedule.
    let mut lease = HoldLease::of(&first, &first.need.hold_ref("a"), T0).unwrap();
    lease.answered(true, T0 + 40_000);
    assert_eq!(
        lease.state(),
        Lease::Held {
            until: T0 + 40_000 + LIFE,
            next: T0 + 40_000 + EVERY
        }
    );
    lease.answered(false, T0 + 80_000);
    assert_eq!(lease.state(), Lease::Gone);
}

#[test]
fn a_short_lifetime_is_renewed_at_its_half() {
    let short = AdmitRequest {
        release_after_ms: 15_000,
        ..ask("a", 1.0)
    };
    let lease = HoldLease::of(&short, &short.need.hold_ref("a"), T0).unwrap();
    assert_eq!(lease.due_at(), Some(T0 + 7_500));
}

#[test]
fn the_ledger_stays_awake_while_it_holds_anything_and_releases_lapsed_holds_on_time() {
    let mut l = Ledger::default();
    assert_eq!(l.awake_until(T0), None, "nothing held: free to sleep");
    let first = ask("a", 1.0);
    assert_eq!(l.admit(&first, T0), Admission::Admit);
    assert_eq!(l.awake_until(T0), Some(T0 + AWAKE_CHECK_MS));
    assert_eq!(l.awake_until(T0 + LIFE - 1), Some(T0 + LIFE));
    // Its timer wakes at the expiry, releases the hold, logs it and lets the object sleep.
    assert_eq!(l.awake_until(T0 + LIFE), None);
    assert_eq!(l.take_released().len(), 1);
    // A settled hold needs no timer.
    assert_eq!(l.admit(&ask("b", 0.1), T0 + LIFE), Admission::Admit);
    let mut done = served("k", None, 10, 0.05);
    done.record.request_id = "b".into();
    done.hold = Some(ask("b", 0.1).need.hold_ref("b"));
    l.settle(&done, T0 + LIFE + 1);
    assert_eq!(l.awake_until(T0 + LIFE + 2), None);
}
