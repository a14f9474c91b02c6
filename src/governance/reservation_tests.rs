//! The ledger rules: reservations, settling once, slices as holds.

use super::admission::*;
use super::admission_tests::{budget, req, served, T0};
use super::refusals::{Admission, Denial};
use super::reserve::{HoldRef, Need};
use super::settle::Rollup;
use super::slice::{SliceReturn, MAX_SLICE_REQUESTS, SLICE_LEASE_MS};
use crate::config::Period;
use crate::usage::UsageSource;

fn ask(key: &str, id: &str, need: Need) -> AdmitRequest {
    AdmitRequest {
        request_id: Some(id.into()),
        need,
        release_after_ms: 70_000,
        ..req(key)
    }
}

fn usd(usd: f64) -> Need {
    Need { tokens: 10, usd }
}

#[test]
fn thirty_two_concurrent_requests_on_a_budget_worth_five_are_admitted_five_times() {
    let mut l = Ledger::default();
    let admitted = (0..32)
        .filter(|i| {
            let r = AdmitRequest {
                key_budget: budget(0.05, Period::Day),
                ..ask("k", &format!("r{i}"), usd(0.01))
            };
            l.admit(&r, T0) == Admission::Admit
        })
        .count();
    assert_eq!(admitted, 5);
}

#[test]
fn settling_replaces_the_reservation_with_the_actual_charge() {
    let mut l = Ledger::default();
    let r = |id: &str| AdmitRequest {
        key_budget: budget(1.0, Period::Day),
        ..ask("k", id, usd(0.6))
    };
    assert_eq!(l.admit(&r("a"), T0), Admission::Admit);
    assert_eq!(l.admit(&r("b"), T0), Admission::Admit);
    assert_eq!(
        l.admit(&r("c"), T0),
        Admission::Deny {
            denial: Denial::KeyBudget,
            retry_after_secs: None
        }
    );
    // "a" cost $0.1, not the $0.6 held: $0.1 spent + $0.6 held leaves room for one more.
    let mut done = served("k", None, 10, 0.1);
    done.record.request_id = "a".into();
    done.hold = Some(HoldRef {
        id: "a".into(),
        requests: 0,
        tokens: 10,
        usd: 0.6,
    });
    l.settle(&done, T0 + 1);
    assert_eq!(l.admit(&r("d"), T0 + 2), Admission::Admit);
    assert!(l.take_released().is_empty());
}

#[test]
fn a_reservation_not_settled_within_the_request_budget_and_margin_is_released_and_logged() {
    let mut l = Ledger::default();
    let r = |id: &str| AdmitRequest {
        key_budget: budget(1.0, Period::Day),
        ..ask("k", id, usd(1.0))
    };
    assert_eq!(l.admit(&r("a"), T0), Admission::Admit);
    assert_ne!(l.admit(&r("b"), T0 + 69_999), Admission::Admit);
    assert_eq!(l.admit(&r("c"), T0 + 70_000), Admission::Admit);
    let released = l.take_released();
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].id, "a");
}

#[test]
fn tpm_holds_each_requests_prompt_estimate_and_max_tokens_until_it_settles() {
    let mut l = Ledger::default();
    let r = |id: &str| AdmitRequest {
        key_tpm: Some(1_000),
        ..ask(
            "k",
            id,
            Need {
                tokens: 400,
                usd: 0.0,
            },
        )
    };
    assert_eq!(l.admit(&r("a"), T0), Admission::Admit);
    assert_eq!(l.admit(&r("b"), T0), Admission::Admit);
    assert_eq!(l.admit(&r("c"), T0), Admission::Admit);
    assert!(matches!(
        l.admit(&r("d"), T0),
        Admission::Deny {
            denial: Denial::KeyTpm,
            ..
        }
    ));
}

#[test]
fn a_record_handed_over_twice_is_charged_once_and_a_late_report_adds_the_difference() {
    let mut l = Ledger::default();
    let key = ScopeId::Key("k".into());
    let mut e = served("k", None, 10, 0.5);
    e.record.request_id = "req_1".into();
    e.record.usage_source = UsageSource::Estimated;
    assert_eq!(l.settle(&e, T0).rollup, Rollup::Record(1));
    assert_eq!(l.settle(&e, T0).rollup, Rollup::Nothing);
    e.record.usage_source = UsageSource::Reported;
    e.record.cost_usd = Some(0.75);
    assert!(matches!(l.settle(&e, T0).rollup, Rollup::Difference(_)));
    let spent = l.spend(&key).unwrap().in_period(Period::Total, T0);
    assert!((spent - 0.75).abs() < 1e-12, "{spent}");
    assert_eq!(l.settle(&e, T0).rollup, Rollup::Nothing);
}

fn slice_ask(id: &str, slice: &str) -> AdmitRequest {
    AdmitRequest {
        key_rpm: Some(1_000),
        key_budget: budget(1.0, Period::Day),
        slice_id: Some(slice.into()),
        ..ask("k", id, usd(0.001))
    }
}

#[test]
fn slices_are_held_so_outstanding_slices_never_exceed_what_is_left() {
    let mut l = Ledger::default();
    let mut granted_usd = 0.0;
    let mut granted_requests = 0;
    let mut slices = 0;
    let mut admitted = 0;
    for i in 0..2_000 {
        let a = l.acquire(&slice_ask(&format!("r{i}"), &format!("s{i}")), T0);
        if a.verdict != Admission::Admit {
            break;
        }
        admitted += 1;
        if let Some(s) = a.slice {
            slices += 1;
            granted_usd += s.allowance.usd.unwrap();
            granted_requests += s.allowance.requests;
            assert!(s.allowance.requests <= MAX_SLICE_REQUESTS);
            assert_eq!(s.until_ms, T0 + SLICE_LEASE_MS);
        }
    }
    // Each slice is a sixteenth of what is left, so they shrink until a limit is nearly spent
    // (fewer than 64 requests' worth left) and requests go one by one, each holding its own
    // reservation, until the budget is reached. Held in all: never more than the limits, but
    // for the last request admitted below them.
    assert!(slices > 10 && slices < admitted, "{slices} of {admitted}");
    assert!(granted_requests + admitted <= 1_000, "{granted_requests}");
    let held = granted_usd + admitted as f64 * 0.001;
    assert!(held <= 1.0 + 0.001 + 1e-9, "{held}");
    assert!(held >= 0.99, "{held}");
}

#[test]
fn a_returned_slice_frees_its_unused_part_and_its_used_requests_count_as_they_settle() {
    let mut l = Ledger::default();
    let a = l.acquire(&slice_ask("r0", "s0"), T0);
    let s = a.slice.unwrap();
    // 1,000 rpm, the request itself counted: 999 / 16 = 62.
    assert_eq!(s.allowance.requests, 62);
    let key = ScopeId::Key("k".into());
    let rpm_left = |l: &mut Ledger| {
        let r = AdmitRequest {
            request_id: None,
            ..slice_ask("x", "probe")
        };
        // A slice is a sixteenth of what is left: what is left is 16 × that (± rounding).
        let a = l.acquire(&r, T0 + 1);
        let n = a.slice.map_or(0, |s| s.allowance.requests);
        l.acquire(
            &AdmitRequest {
                request_id: None,
                slice_id: None,
                returns: vec![SliceReturn {
                    id: "probe".into(),
                    scopes: vec![ScopeId::Key("k".into())],
                    unused_requests: n,
                    unused_tokens: 0,
                    unused_usd: 1.0,
                }],
                ..slice_ask("x", "probe")
            },
            T0 + 1,
        );
        n
    };
    assert_eq!(rpm_left(&mut l), (1_000 - 1 - 62) / 16);
    // Two requests from the slice settle; the other 60 go back.
    for i in 0..2 {
        let mut e = served("k", None, 10, 0.001);
        e.record.request_id = format!("local{i}");
        e.hold = Some(HoldRef {
            id: s.id.clone(),
            requests: 1,
            tokens: 0,
            usd: 0.001,
        });
        l.settle(&e, T0 + 1);
    }
    l.acquire(
        &AdmitRequest {
            request_id: None,
            slice_id: None,
            returns: vec![SliceReturn {
                id: s.id.clone(),
                scopes: vec![ScopeId::Key("k".into())],
                unused_requests: 60,
                unused_tokens: 0,
                unused_usd: s.allowance.usd.unwrap() - 0.002,
            }],
            ..slice_ask("x", "none")
        },
        T0 + 1,
    );
    assert_eq!(rpm_left(&mut l), (1_000 - 3) / 16);
    assert!(l.is_loaded(&key));
}
