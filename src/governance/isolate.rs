//! The isolate's side of its tenants' ledgers: admission from slices without a round
//! trip, renewal in the background, one round trip per request when no slice fits, and what
//! happens when the ledger cannot be reached.
//!
//! - A live slice that fits the request admits it locally. At half its lease or half its
//!   allowance, the caller renews it in the background (`renew`, under `waitUntil`, as routing
//!   grants are); the new slice retires the old, whose unused part goes back with the next call.
//! - Otherwise the request asks the ledger (`/acquire`), which admits it by itself and grants a
//!   slice unless a limit is nearly spent.
//! - Ledger unreachable: the request is admitted from what is left of this subject's last slice,
//!   even past its lease, for `OUTAGE_GRACE_MS`; beyond that, or with nothing left, it is
//!   refused (`LedgerUnreachable`, 429), never admitted unchecked.
//! - Records the ledger did not take are kept (`retained`) and sent first with the next settle.
//!
//! `LedgerObject` is the ledger as the isolate sees it: the Durable Object at the edge, a
//! fault-injecting fake in the host tests.

use super::ask::{AdmitAnswer, AdmitRequest, SettleEntry};
use super::refusals::{Admission, Denial};
use super::reserve::HoldRef;
use super::retained::Retained;
use super::slice::{LocalSlice, SliceReturn, SLICE_LEASE_MS};
use std::cell::RefCell;
use std::collections::HashMap;

#[allow(async_fn_in_trait)]
pub trait LedgerObject {
    async fn acquire(&self, ask: &AdmitRequest) -> Result<AdmitAnswer, String>;
    async fn settle(&self, entries: &[SettleEntry]) -> Result<(), String>;
}

/// Whose limits a slice admits for: a key, and the end user where end users are limited.
type Subject = (String, Option<String>);

fn subject(ask: &AdmitRequest) -> Subject {
    (
        ask.key_id.clone(),
        ask.end_user.as_ref().map(|(u, _)| u.clone()),
    )
}

#[derive(Debug)]
struct Held {
    slice: LocalSlice,
    /// The limits it was granted under.
    limits: AdmitRequest,
}

impl Held {
    /// The unused part, addressed to the scopes it was held on.
    fn give_back(self) -> SliceReturn {
        SliceReturn {
            scopes: self.limits.scopes(),
            ..self.slice.give_back()
        }
    }
}

#[derive(Debug, Default)]
struct TenantBook {
    slices: HashMap<Subject, Held>,
    /// Subjects with a slice-seeking call in flight, since when (a call whose request was
    /// cancelled stops counting after one lease).
    asking: HashMap<Subject, u64>,
    returns: Vec<SliceReturn>,
    retained: Retained,
}

/// Slices kept per tenant before those past any use are dropped (one per key, or per key and
/// end user where end users are limited: a tenant with many end users would otherwise grow).
const PRUNE_AFTER: usize = 256;

impl TenantBook {
    /// Gives back and forgets slices that can no longer admit anything, once there are many.
    fn prune(&mut self, now: u64) {
        if self.slices.len() <= PRUNE_AFTER {
            return;
        }
        let (dead, live): (HashMap<_, _>, HashMap<_, _>) = std::mem::take(&mut self.slices)
            .into_iter()
            .partition(|(_, h)| !h.slice.is_live_in_outage(now));
        self.slices = live;
        self.returns.extend(dead.into_values().map(Held::give_back));
        self.asking.retain(|_, &mut since| fresh(since, now));
    }

    fn asking(&self, s: &Subject, now: u64) -> bool {
        self.asking.get(s).is_some_and(|&since| fresh(since, now))
    }
}

/// A slice-seeking call made at `since` still counts as in flight.
fn fresh(since: u64, now: u64) -> bool {
    now < since.saturating_add(SLICE_LEASE_MS)
}

/// Takes the request's need from the subject's slice, if it was granted under the same limits
/// and `live` says it may still admit; with the slice, as left.
fn take_from<'a>(
    slices: &'a mut HashMap<Subject, Held>,
    s: &Subject,
    ask: &AdmitRequest,
    live: impl FnOnce(&LocalSlice) -> bool,
) -> Option<(HoldRef, &'a LocalSlice)> {
    let held = slices
        .get_mut(s)
        .filter(|h| h.limits.same_limits(ask) && live(&h.slice))?;
    let hold = held.slice.take(ask.need)?;
    Some((hold, &held.slice))
}

/// This isolate's slices, returns and retained records, per tenant.
#[derive(Debug, Default)]
pub struct IsolateLedger {
    /// Makes slice ids unique across isolates.
    id: String,
    seq: u64,
    tenants: HashMap<String, TenantBook>,
}

/// How a request was admitted (or not), and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionRecord {
    pub verdict: Admission,
    pub hold: Option<HoldRef>,
    pub via: Via,
    /// Records are waiting in this isolate and the ledger just answered: send them.
    pub flush: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// From a live slice; `renew`: start a background renewal.
    Slice { renew: bool },
    /// The ledger decided (one round trip).
    Ledger,
    /// The ledger could not be reached; decided from the last slice.
    Outage,
}

impl IsolateLedger {
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }

    fn book(&mut self, tenant: &str) -> &mut TenantBook {
        self.tenants.entry(tenant.to_owned()).or_default()
    }

    /// Slices held for the tenant's subjects.
    #[cfg(test)]
    pub fn slices(&self, tenant: &str) -> usize {
        self.tenants.get(tenant).map_or(0, |b| b.slices.len())
    }

    pub fn retained(&self, tenant: &str) -> usize {
        self.tenants.get(tenant).map_or(0, |b| b.retained.len())
    }

    /// Admits from a live slice of the same limits, if one fits.
    pub fn take_local(
        &mut self,
        tenant: &str,
        ask: &AdmitRequest,
        now: u64,
    ) -> Option<AdmissionRecord> {
        let s = subject(ask);
        let book = self.book(tenant);
        let (hold, slice) = take_from(&mut book.slices, &s, ask, |l| l.is_live(now))?;
        let renew = slice.renewal_due(now) && !book.asking(&s, now);
        if renew {
            book.asking.insert(s, now);
        }
        Some(AdmissionRecord {
            verdict: Admission::Admit,
            hold: Some(hold),
            via: Via::Slice { renew },
            flush: false,
        })
    }

    /// With the ledger unreachable: from what is left of the last slice, within the grace.
    pub fn take_in_outage(
        &mut self,
        tenant: &str,
        ask: &AdmitRequest,
        now: u64,
    ) -> AdmissionRecord {
        let slices = &mut self.book(tenant).slices;
        let hold = take_from(slices, &subject(ask), ask, |l| l.is_live_in_outage(now))
            .map(|(hold, _)| hold);
        let verdict = match hold {
            Some(_) => Admission::Admit,
            None => Admission::Deny {
                denial: Denial::LedgerUnreachable,
                retry_after_secs: Some(1),
            },
        };
        AdmissionRecord {
            verdict,
            hold,
            via: Via::Outage,
            flush: false,
        }
    }

    /// Fills in what goes with a call: a slice asked for (unless one is being asked for
    /// already; `force` for a renewal, which marked itself), and the returns waiting.
    fn prepare(&mut self, tenant: &str, ask: &mut AdmitRequest, force: bool, now: u64) {
        self.seq += 1;
        let slice_id = format!("{}-{}", self.id, self.seq);
        let s = subject(ask);
        let book = self.book(tenant);
        if force || !book.asking(&s, now) {
            book.asking.insert(s, now);
            ask.slice_id = Some(slice_id);
        }
        ask.returns = std::mem::take(&mut book.returns);
    }

    fn answered(&mut self, tenant: &str, ask: &AdmitRequest, answer: &AdmitAnswer, now: u64) {
        let s = subject(ask);
        let book = self.book(tenant);
        if ask.slice_id.is_some() {
            book.asking.remove(&s);
        }
        if let Some(grant) = answer.slice.clone() {
            let held = Held {
                slice: LocalSlice::new(grant, now),
                // The limits only: the returns went with the call.
                limits: AdmitRequest {
                    returns: Vec::new(),
                    ..ask.clone()
                },
            };
            if let Some(old) = book.slices.insert(s, held) {
                book.returns.push(old.give_back());
            }
        }
        book.prune(now);
    }

    fn failed(&mut self, tenant: &str, ask: AdmitRequest) {
        let s = subject(&ask);
        let book = self.book(tenant);
        if ask.slice_id.is_some() {
            book.asking.remove(&s);
        }
        book.returns.extend(ask.returns);
    }
}

/// Admits one request: locally from a slice, else with one round trip, else (ledger down)
/// from the last slice. `ask.request_id` and `ask.need` are the request's.
pub async fn admit<P: LedgerObject>(
    port: &P,
    book: &RefCell<IsolateLedger>,
    tenant: &str,
    mut ask: AdmitRequest,
    now: u64,
) -> AdmissionRecord {
    if let Some(local) = book.borrow_mut().take_local(tenant, &ask, now) {
        return local;
    }
    book.borrow_mut().prepare(tenant, &mut ask, false, now);
    match port.acquire(&ask).await {
        Ok(answer) => {
            let mut b = book.borrow_mut();
            b.answered(tenant, &ask, &answer, now);
            let hold = match (&answer.verdict, &ask.request_id) {
                (Admission::Admit, Some(id)) => Some(ask.need.hold_ref(id)),
                _ => None,
            };
            AdmissionRecord {
                verdict: answer.verdict,
                hold,
                via: Via::Ledger,
                flush: b.retained(tenant) > 0,
            }
        }
        Err(_) => {
            let mut b = book.borrow_mut();
            b.failed(tenant, ask.clone());
            b.take_in_outage(tenant, &ask, now)
        }
    }
}

/// Admits one call (`AdmitRequest::call`) with one round trip, never from a slice: a slice's
/// requests count only when their records settle, and a call has none. A ledger that cannot be
/// reached refuses it, as it refuses a request with no slice left.
pub async fn admit_call<P: LedgerObject>(port: &P, ask: &AdmitRequest) -> Admission {
    match port.acquire(ask).await {
        Ok(answer) => answer.verdict,
        Err(_) => Admission::Deny {
            denial: Denial::LedgerUnreachable,
            retry_after_secs: Some(1),
        },
    }
}

/// Renews the subject's slice in the background (after `Via::Slice { renew: true }`), giving
/// back the slices retired since the last call. A failure keeps the current slice until it
/// lapses, and the returns for the next call.
pub async fn renew<P: LedgerObject>(
    port: &P,
    book: &RefCell<IsolateLedger>,
    tenant: &str,
    mut ask: AdmitRequest,
    now: u64,
) -> Result<(), String> {
    ask.request_id = None;
    book.borrow_mut().prepare(tenant, &mut ask, true, now);
    match port.acquire(&ask).await {
        Ok(answer) => {
            book.borrow_mut().answered(tenant, &ask, &answer, now);
            Ok(())
        }
        Err(e) => {
            book.borrow_mut().failed(tenant, ask);
            Err(e)
        }
    }
}

/// Hands records to the ledger, after those kept from failed calls; if the call fails, every
/// one of them is kept for the next. `Err` says how many are kept.
pub async fn settle<P: LedgerObject>(
    port: &P,
    book: &RefCell<IsolateLedger>,
    tenant: &str,
    batch: Vec<SettleEntry>,
) -> Result<(), (usize, String)> {
    let mut all = book.borrow_mut().book(tenant).retained.take();
    all.extend(batch);
    if all.is_empty() {
        return Ok(());
    }
    match port.settle(&all).await {
        Ok(()) => Ok(()),
        Err(e) => {
            let mut b = book.borrow_mut();
            let kept = b.book(tenant);
            kept.retained.keep(all);
            Err((kept.retained.len(), e))
        }
    }
}
