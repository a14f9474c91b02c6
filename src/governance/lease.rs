//! A reservation lasts as long as its request. The ledger releases a hold nobody settled after
//! its lifetime (`AdmitRequest::release_after`: the request budget and a margin), as a guard
//! against an isolate that died with it; no timer may release the hold of a request that is still
//! running. A request that can outlive that lifetime, a stream, renews its hold while it runs:
//! when half of the lifetime is left, it asks the ledger to hold it one lifetime from then.
//!
//! A hold of a request admitted from a slice is the slice's hold (`Holds::returned`); renewing it
//! keeps what is left of the slice held, which is only ever more than the stream needs.
//!
//! Cost: a request without limits has no hold and never renews; a request whose hold carries
//! nothing a limit reads (a key limited by `rpm` alone, admitted by the ledger: counted at
//! admission) never renews; a stream shorter than half a lifetime never renews. Otherwise one
//! ledger round trip per half lifetime of the stream.

use super::admission::{Ledger, ScopeId};
use super::ask::{AdmitRequest, Limit};
use super::reserve::HoldRef;
use serde::{Deserialize, Serialize};

/// `POST /renew`: hold `hold` (on whichever of `scopes` holds it) one lifetime from now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenewRequest {
    pub hold: String,
    pub scopes: Vec<ScopeId>,
    pub release_after_ms: u64,
}

/// The ledger's answer: `false` when the hold was gone (settled, or already released).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Renewed {
    pub renewed: bool,
}

/// After a failed renewal, the next try comes after this share of the lifetime.
const RETRY_DIVISOR: u64 = 8;
/// A stream renews at least this often, whatever the lifetime: the runtime drops a ledger
/// object that received nothing for 70 s from memory even while it keeps a timer pending
/// (`Ledger::awake_until`), and the holds with it.
pub const MAX_RENEW_INTERVAL_MS: u64 = 30_000;
/// The ledger's keep-awake timer looks again at least this often.
pub const AWAKE_CHECK_MS: u64 = 15_000;

/// Where a running request's hold stands, as the request sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease {
    /// Held at the ledger until `until` at least; renewed next at `next`.
    Held { until: u64, next: u64 },
    /// The ledger no longer holds it: nothing left to renew.
    Gone,
}

/// A running request's hold and when to renew it; time passed in.
#[derive(Debug, Clone, PartialEq)]
pub struct HoldLease {
    renew: RenewRequest,
    state: Lease,
}

impl HoldLease {
    /// The lease of a request admitted at `admitted_ms` (before its admission was asked) under
    /// `hold`; `None` when its hold carries nothing a limit reads.
    pub fn of(ask: &AdmitRequest, hold: &HoldRef, admitted_ms: u64) -> Option<Self> {
        let reads_hold = hold.requests > 0
            || ask
                .limits()
                .iter()
                .any(|(_, limit, _)| matches!(limit, Limit::Budget(_) | Limit::Tokens(_)));
        if !reads_hold {
            return None;
        }
        let lifetime = ask.release_after();
        let mut me = Self {
            renew: RenewRequest {
                hold: hold.id.clone(),
                scopes: ask.scopes(),
                release_after_ms: lifetime,
            },
            state: Lease::Gone,
        };
        me.held_until(admitted_ms.saturating_add(lifetime));
        Some(me)
    }

    fn lifetime(&self) -> u64 {
        self.renew.release_after_ms
    }

    /// Held until `until`, a lifetime after it was last held: renewed when half of it is left,
    /// or `MAX_RENEW_INTERVAL_MS` after, whichever comes first.
    fn held_until(&mut self, until: u64) {
        let every = (self.lifetime() / 2).min(MAX_RENEW_INTERVAL_MS);
        let next = until.saturating_sub(self.lifetime()).saturating_add(every);
        self.state = Lease::Held { until, next };
    }

    pub fn state(&self) -> Lease {
        self.state
    }

    /// When to renew next; `None`: never again.
    pub fn due_at(&self) -> Option<u64> {
        match self.state {
            Lease::Held { next, .. } => Some(next),
            Lease::Gone => None,
        }
    }

    /// What to send the ledger.
    pub fn request(&self) -> &RenewRequest {
        &self.renew
    }

    /// The ledger answered a renewal sent at `sent_ms`.
    pub fn answered(&mut self, renewed: bool, sent_ms: u64) {
        if renewed {
            // The ledger holds it a lifetime from when it read the call, after it was sent.
            self.held_until(sent_ms.saturating_add(self.lifetime()));
        } else {
            self.state = Lease::Gone;
        }
    }

    /// The renewal did not reach the ledger: tried again soon, while the hold is still there
    /// (the last try just before it lapses); past that, the ledger has released it.
    pub fn failed(&mut self, now_ms: u64) {
        if let Lease::Held { until, .. } = self.state {
            let retry = now_ms.saturating_add((self.lifetime() / RETRY_DIVISOR).max(1));
            let next = retry.min(until.saturating_sub(1));
            self.state = if next > now_ms {
                Lease::Held { until, next }
            } else {
                Lease::Gone
            };
        }
    }
}

impl Ledger {
    /// Holds `r.hold` one lifetime from `now_ms` on each scope that still holds it; `false` if
    /// none does (it settled, or its lifetime ran out before the renewal came).
    pub fn renew(&mut self, r: &RenewRequest, now_ms: u64) -> bool {
        self.expire_holds(now_ms);
        let until = now_ms.saturating_add(r.release_after_ms);
        let mut renewed = false;
        for id in &r.scopes {
            if let Some(scope) = self.scopes.get_mut(id) {
                renewed |= scope.holds.renew(&r.hold, until);
            }
        }
        renewed
    }

    /// Releases the holds past their time; then, while any hold is outstanding, when to look
    /// again (`None`: nothing is held). A ledger object keeps a timer pending until then: the
    /// runtime drops an object idle for 10 s from memory unless a timer is pending, and a hold
    /// lives only in memory, so a quiet spell would release the hold of a request still
    /// running.
    pub fn awake_until(&mut self, now_ms: u64) -> Option<u64> {
        self.expire_holds(now_ms);
        // A hold placed always sets `next_expiry`: without one, there is nothing to scan.
        if self.next_expiry.is_none() || self.scopes.values().all(|s| s.holds.is_empty()) {
            return None;
        }
        let check = now_ms.saturating_add(AWAKE_CHECK_MS);
        Some(
            self.next_expiry
                .map_or(check, |at| at.min(check))
                .max(now_ms.saturating_add(1)),
        )
    }
}

#[cfg(test)]
#[path = "lease_tests.rs"]
mod tests;
