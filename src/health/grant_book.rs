//! One isolate's admission grants for one tenant/provider: what it may decide on its own, without
//! a round trip to the routing object, and for how long.
//!
//! - A grant admits a quiet candidate for its lease or its allowance, whichever ends first.
//! - A skip grant: when the object answers that a model's breaker is open, the isolate skips it
//!   locally until the breaker's own `until` or the lease, whichever comes first. An open breaker
//!   cannot close before its `until` but by a manual reset, so the skip is exact but for a reset
//!   made through another isolate, which is seen within the lease.
//! - A generation moves on every report this isolate starts or finishes for the provider. An
//!   `/acquire` in flight while such news was sent may carry an answer the object gave before it
//!   heard the news; its ticket (the generation when it was sent) no longer matches, so that
//!   answer is not installed. An acquire sent after a report's answer came back is answered
//!   after the object applied that report, so its grant is current.

use super::breaker::Gate;
use super::grant::{Grant, LocalGrant};
use super::provider_state::Lease;
use crate::config::KeyStrategy;
use crate::config::{KeyId, ModelId};
use std::collections::HashMap;

/// What the isolate decided for one request without asking the routing object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalAdmission {
    /// Admitted under a grant, with this key order.
    Admit(Vec<KeyId>),
    /// Skipped: the breaker was open when last asked, until `breaker_until`.
    Skip { breaker_until: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SkipGrant {
    local_until: u64,
    breaker_until: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderGrants {
    generation: u64,
    by_model: HashMap<ModelId, LocalGrant>,
    skips: HashMap<ModelId, SkipGrant>,
}

/// Grants issued together (at start-up, after an outage) would all end together and send their
/// isolates back to the object in one burst; each isolate therefore keeps 70–100% of a grant's
/// remaining time, drawn from `random`.
pub fn jittered(grant: Grant, now: u64, random: u32) -> Grant {
    let left = grant.until.saturating_sub(now);
    let keep = 70 + u64::from(random % 31);
    Grant {
        until: now.saturating_add(left.saturating_mul(keep) / 100),
        ..grant
    }
}

impl ProviderGrants {
    /// Taken just before an `/acquire` is sent.
    pub fn ticket(&self) -> u64 {
        self.generation
    }

    /// A report for this provider is being sent, or has just been answered (or its breakers were
    /// reset here): every grant and skip ends.
    pub fn news(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.by_model.clear();
        self.skips.clear();
    }

    /// Installs a grant answered to an acquire sent with `ticket`; false if news came in between.
    pub fn install(&mut self, model: &ModelId, grant: Grant, ticket: u64) -> bool {
        if ticket != self.generation {
            return false;
        }
        self.skips.remove(model);
        self.by_model.insert(model.clone(), LocalGrant::new(grant));
        true
    }

    /// Installs a skip after the object answered that `model`'s breaker is open until
    /// `breaker_until`; it lasts until then or for `lease_ms`, whichever is sooner.
    pub fn install_skip(
        &mut self,
        model: &ModelId,
        breaker_until: u64,
        now: u64,
        lease_ms: u64,
        ticket: u64,
    ) -> bool {
        let local_until = breaker_until.min(now.saturating_add(lease_ms));
        if ticket != self.generation || local_until <= now {
            return false;
        }
        self.by_model.remove(model);
        self.skips.insert(
            model.clone(),
            SkipGrant {
                local_until,
                breaker_until,
            },
        );
        true
    }

    /// Whether a live skip says `model`'s breaker is open now (read-only: the ranking and the
    /// spread draw ask before any admission).
    pub fn skipping(&self, model: &ModelId, now: u64) -> bool {
        self.skips.get(model).is_some_and(|s| now < s.local_until)
    }

    /// The decision for one more request of `model`, if a grant or skip is live.
    pub fn take(
        &mut self,
        model: &ModelId,
        keys: &[KeyId],
        strategy: KeyStrategy,
        now: u64,
    ) -> Option<LocalAdmission> {
        if let Some(skip) = self.skips.get(model).copied() {
            if now < skip.local_until {
                return Some(LocalAdmission::Skip {
                    breaker_until: skip.breaker_until,
                });
            }
            self.skips.remove(model);
        }
        let order = self.by_model.get_mut(model)?.take(keys, strategy, now);
        if order.is_none() {
            self.by_model.remove(model);
        }
        order.map(LocalAdmission::Admit)
    }
}

impl Lease {
    /// Sent without the object's word, on these keys in order and with no grant: an isolate's
    /// own admission, or an unreachable object's (its state is advisory, never a reason to fail).
    pub fn pass(keys: Vec<KeyId>) -> Self {
        Self {
            admission: Gate::Pass,
            keys,
            grant: None,
        }
    }
}

#[cfg(test)]
#[path = "grant_book_tests.rs"]
mod tests;
