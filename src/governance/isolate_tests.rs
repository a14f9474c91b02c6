//! The isolate's side against a fault-injecting fake ledger (`LedgerObject`): records survive
//! failed calls, and limits stay enforced from slices while the ledger is down.

use super::admission::{Ledger, ScopeId};
use super::admission_tests::{budget, req, served, T0};
use super::ask::{AdmitAnswer, AdmitRequest, SettleEntry};
use super::isolate::{self, IsolateLedger, LedgerObject, Via};
use super::refusals::{Admission, Denial};
use super::reserve::Need;
use super::retained::MAX_RETAINED;
use super::settle::Rollup;
use super::slice::{OUTAGE_GRACE_MS, SLICE_LEASE_MS};
use crate::config::Period;
use futures::executor::block_on;
use std::cell::{Cell, RefCell};

/// A ledger that fails its next `fail_next` calls; `lose_answers` makes it apply a settle and
/// then fail (the answer lost on the way back).
#[derive(Default)]
struct FaultyLedger {
    ledger: RefCell<Ledger>,
    now: Cell<u64>,
    fail_next: Cell<u32>,
    lose_answers: Cell<bool>,
    calls: Cell<u32>,
    /// What reached the roll-ups: requests and money.
    requests: Cell<u64>,
    usd: Cell<f64>,
}

impl FaultyLedger {
    fn fails(&self) -> bool {
        self.calls.set(self.calls.get() + 1);
        let n = self.fail_next.get();
        self.fail_next.set(n.saturating_sub(1));
        n > 0
    }

    fn key_spend(&self) -> f64 {
        let s = self.ledger.borrow().spend(&ScopeId::Key("k".into()));
        s.map_or(0.0, |s| s.in_period(Period::Total, self.now.get()))
    }
}

impl LedgerObject for FaultyLedger {
    async fn acquire(&self, ask: &AdmitRequest) -> Result<AdmitAnswer, String> {
        if self.fails() {
            return Err("ledger unreachable".into());
        }
        Ok(self.ledger.borrow_mut().acquire(ask, self.now.get()))
    }

    async fn settle(&self, entries: &[SettleEntry]) -> Result<(), String> {
        if self.fails() && !self.lose_answers.get() {
            return Err("ledger unreachable".into());
        }
        for e in entries {
            match self.ledger.borrow_mut().settle(e, self.now.get()).rollup {
                Rollup::Record(n) => {
                    self.requests.set(self.requests.get() + n);
                    self.usd
                        .set(self.usd.get() + e.record.cost_usd.unwrap_or(0.0));
                }
                Rollup::Difference(d) => self.usd.set(self.usd.get() + d.cost_usd.unwrap_or(0.0)),
                Rollup::Nothing => {}
            }
        }
        if self.lose_answers.get() {
            return Err("answer lost".into());
        }
        Ok(())
    }
}

fn record(i: u64, minute: u64) -> SettleEntry {
    let mut e = served("k", Some(&format!("user-{}", i % 3)), 10, 0.001);
    e.record.request_id = format!("req_{i}");
    e.record.at_ms = T0 + minute * 60_000;
    e
}

#[test]
fn a_ledger_that_fails_its_next_n_calls_loses_none_of_the_records() {
    let port = FaultyLedger::default();
    port.now.set(T0);
    let book = RefCell::new(IsolateLedger::new("iso"));
    let mut sent = 0u64;
    let mut batch = |n: u64, minutes: u64| {
        let b: Vec<SettleEntry> = (sent..sent + n).map(|i| record(i, i % minutes)).collect();
        sent += n;
        block_on(isolate::settle(&port, &book, "t", b))
    };
    // Five failures: every record is kept and goes with the sixth call.
    port.fail_next.set(5);
    for _ in 0..5 {
        assert!(batch(100, 1).is_err());
    }
    assert_eq!(book.borrow().retained("t"), 500);
    assert!(batch(100, 1).is_ok());
    assert_eq!(book.borrow().retained("t"), 0);
    // A settle that reached the ledger but whose answer was lost is sent again, and counted once.
    port.lose_answers.set(true);
    port.fail_next.set(1);
    assert!(batch(50, 1).is_err());
    port.lose_answers.set(false);
    assert!(batch(50, 1).is_ok());
    // A long outage: past MAX_RETAINED records, those of one roll-up row are folded into one,
    // which keeps their money and their count.
    port.fail_next.set(40);
    for _ in 0..40 {
        assert!(batch(100, 4).is_err());
    }
    let kept = book.borrow().retained("t");
    assert!(kept <= MAX_RETAINED, "{kept} kept");
    assert!(batch(0, 1).is_ok());
    assert_eq!(
        port.requests.get(),
        sent,
        "every request reached the roll-ups"
    );
    let expected = sent as f64 * 0.001;
    assert!(
        (port.usd.get() - expected).abs() < 1e-9,
        "{}",
        port.usd.get()
    );
    assert!((port.key_spend() - expected).abs() < 1e-9, "key spend");
}

fn limited(id: &str) -> AdmitRequest {
    AdmitRequest {
        key_budget: budget(1.0, Period::Day),
        need: Need {
            tokens: 10,
            usd: 0.001,
        },
        request_id: Some(id.into()),
        release_after_ms: 70_000,
        ..req("k")
    }
}

fn admit(
    port: &FaultyLedger,
    book: &RefCell<IsolateLedger>,
    i: u32,
    now: u64,
) -> isolate::AdmissionRecord {
    block_on(isolate::admit(
        port,
        book,
        "t",
        limited(&format!("r{i}")),
        now,
    ))
}

#[test]
fn a_warm_limited_key_admits_from_its_slice_with_no_round_trip() {
    let port = FaultyLedger::default();
    port.now.set(T0);
    let book = RefCell::new(IsolateLedger::new("iso"));
    assert_eq!(admit(&port, &book, 0, T0).via, Via::Ledger);
    let calls = port.calls.get();
    for i in 1..20 {
        let a = admit(&port, &book, i, T0 + 1);
        assert_eq!(a.verdict, Admission::Admit);
        assert!(matches!(a.via, Via::Slice { .. }));
    }
    assert_eq!(port.calls.get(), calls, "no call while the slice lasts");
    // Half the lease: renewal is due, in the background; the new slice retires the old one,
    // whose unused part goes back with the next call.
    let a = admit(&port, &book, 20, T0 + SLICE_LEASE_MS / 2);
    assert_eq!(a.via, Via::Slice { renew: true });
    assert!(block_on(isolate::renew(&port, &book, "t", limited("x"), T0 + 1_000)).is_ok());
    assert!(block_on(isolate::renew(&port, &book, "t", limited("x"), T0 + 1_100)).is_ok());
    let held = port.ledger.borrow_mut().acquire(
        &AdmitRequest {
            request_id: None,
            ..limited("probe")
        },
        T0 + 1_100,
    );
    assert_eq!(held.verdict, Admission::Admit);
}

#[test]
fn limits_stay_enforced_from_slices_while_it_is_down() {
    let port = FaultyLedger::default();
    port.now.set(T0);
    let book = RefCell::new(IsolateLedger::new("iso"));
    // A cold isolate with the ledger down admits nothing unchecked.
    port.fail_next.set(u32::MAX);
    let cold = admit(&port, &book, 0, T0);
    assert_eq!(
        cold.verdict,
        Admission::Deny {
            denial: Denial::LedgerUnreachable,
            retry_after_secs: Some(1)
        }
    );
    port.fail_next.set(0);
    assert_eq!(admit(&port, &book, 1, T0).via, Via::Ledger);
    // Down again: requests are admitted from what is left of the slice, past its lease, and
    // no more: a $1 budget at $0.001 a request, a slice of a sixteenth, 62 requests.
    port.fail_next.set(u32::MAX);
    let mut admitted = 0;
    for i in 2..1_000 {
        let now = T0 + SLICE_LEASE_MS + u64::from(i);
        let a = admit(&port, &book, i, now);
        if a.verdict != Admission::Admit {
            assert_eq!(a.via, Via::Outage);
            break;
        }
        admitted += 1;
    }
    assert_eq!(admitted, 62);
    // Nothing is left, and after the grace nothing would be either.
    let late = T0 + SLICE_LEASE_MS + OUTAGE_GRACE_MS;
    assert_ne!(admit(&port, &book, 5_000, late).verdict, Admission::Admit);
    // Back: the ledger decides again.
    port.fail_next.set(0);
    assert_eq!(admit(&port, &book, 5_001, late).verdict, Admission::Admit);
}

#[test]
fn a_slice_lapsed_past_the_outage_grace_admits_nothing() {
    let port = FaultyLedger::default();
    port.now.set(T0);
    let book = RefCell::new(IsolateLedger::new("iso"));
    assert_eq!(admit(&port, &book, 0, T0).via, Via::Ledger);
    port.fail_next.set(u32::MAX);
    let in_grace = T0 + SLICE_LEASE_MS + OUTAGE_GRACE_MS - 1;
    assert_eq!(admit(&port, &book, 1, in_grace).verdict, Admission::Admit);
    let after = admit(&port, &book, 2, in_grace + 1);
    assert_eq!(after.via, Via::Outage);
    assert_ne!(after.verdict, Admission::Admit);
}

#[test]
fn slices_of_many_end_users_past_any_use_are_given_back_and_forgotten() {
    let port = FaultyLedger::default();
    port.now.set(T0);
    let book = RefCell::new(IsolateLedger::new("iso"));
    let limits = crate::config::policy::EndUserLimits {
        budget: budget(1_000.0, Period::Day),
        rpm: None,
    };
    let for_user = |u: usize, now: u64| {
        let ask = AdmitRequest {
            end_user: Some((format!("user-{u}"), limits)),
            key_budget: None,
            ..limited(&format!("r{u}"))
        };
        block_on(isolate::admit(&port, &book, "t", ask, now))
    };
    for u in 0..300 {
        assert_eq!(for_user(u, T0).verdict, Admission::Admit);
    }
    assert_eq!(book.borrow().slices("t"), 300);
    let later = T0 + SLICE_LEASE_MS + OUTAGE_GRACE_MS;
    port.now.set(later);
    assert_eq!(for_user(300, later).verdict, Admission::Admit);
    assert_eq!(book.borrow().slices("t"), 1);
}

#[test]
fn a_changed_policy_is_not_admitted_from_a_slice_granted_under_the_old_one() {
    let port = FaultyLedger::default();
    port.now.set(T0);
    let book = RefCell::new(IsolateLedger::new("iso"));
    assert_eq!(admit(&port, &book, 0, T0).via, Via::Ledger);
    assert!(matches!(admit(&port, &book, 1, T0).via, Via::Slice { .. }));
    let tighter = AdmitRequest {
        key_budget: budget(0.5, Period::Day),
        ..limited("r2")
    };
    let a = block_on(isolate::admit(&port, &book, "t", tighter, T0));
    assert_eq!(a.via, Via::Ledger);
}

#[test]
fn a_call_of_a_fan_out_route_counts_against_the_keys_rpm_with_one_round_trip_and_holds_nothing() {
    use crate::config::policy::KeyPolicy;
    let port = FaultyLedger::default();
    port.now.set(T0);
    // Only an rpm makes a call ask the ledger: other limits do not hold it.
    let unlimited = KeyPolicy {
        tpm: Some(10),
        budget: budget(0.0, Period::Day),
        ..KeyPolicy::default()
    };
    assert!(AdmitRequest::call("k", &unlimited, "call").is_none());
    let policy = KeyPolicy {
        rpm: Some(4),
        budget: budget(0.000_001, Period::Day),
        ..KeyPolicy::default()
    };
    let call = AdmitRequest::call("k", &policy, "call").unwrap();
    for _ in 0..3 {
        assert_eq!(
            block_on(isolate::admit_call(&port, &call)),
            Admission::Admit
        );
    }
    // The calls and the key's requests share one minute: the fourth slot goes to a request.
    let book = RefCell::new(IsolateLedger::new("iso"));
    let request = AdmitRequest {
        key_rpm: Some(4),
        ..req("k")
    };
    let admitted = block_on(isolate::admit(&port, &book, "t", request.clone(), T0));
    assert_eq!(admitted.verdict, Admission::Admit);
    match block_on(isolate::admit_call(&port, &call)) {
        Admission::Deny {
            denial: Denial::KeyRpm,
            retry_after_secs: Some(s),
        } if (1..=60).contains(&s) => {}
        v => panic!("the call past the rpm is refused with Retry-After: {v:?}"),
    }
    assert_eq!(port.calls.get(), 5, "each call one round trip");
    let refused = block_on(isolate::admit(&port, &book, "t", request, T0));
    assert!(matches!(
        refused.verdict,
        Admission::Deny {
            denial: Denial::KeyRpm,
            ..
        }
    ));
    // A call holds nothing: no hold to settle, none left to expire.
    let ledger = port.ledger.borrow();
    let key = ledger.scopes.get(&ScopeId::Key("k".into())).unwrap();
    assert!(key.holds.is_empty());
    drop(ledger);
    // A minute later the calls are admitted again.
    port.now.set(T0 + 61_000);
    assert_eq!(
        block_on(isolate::admit_call(&port, &call)),
        Admission::Admit
    );
}

#[test]
fn a_call_the_ledger_cannot_hear_is_refused_never_admitted_unchecked() {
    use crate::config::policy::KeyPolicy;
    let port = FaultyLedger::default();
    port.now.set(T0);
    port.fail_next.set(1);
    let policy = KeyPolicy {
        rpm: Some(100),
        ..KeyPolicy::default()
    };
    let call = AdmitRequest::call("k", &policy, "call").unwrap();
    assert_eq!(
        block_on(isolate::admit_call(&port, &call)),
        Admission::Deny {
            denial: Denial::LedgerUnreachable,
            retry_after_secs: Some(1)
        }
    );
    assert_eq!(
        block_on(isolate::admit_call(&port, &call)),
        Admission::Admit
    );
}
