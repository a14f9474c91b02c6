//! The ledger's decisions: whether a request may go upstream, and which slice an isolate may
//! admit from on its own (`acquire`); what a finished request adds to each scope (`settle`, in
//! `settle.rs`). One ledger per tenant holds every scope of that tenant: the tenant itself, each
//! caller key, each end user.
//!
//! Request counts, token counts and holds live in memory only (an object that is evicted
//! forgets at most one minute of counts, and the holds outstanding then; while it holds anything
//! it keeps itself from being dropped when idle, `lease`); spend and the settled request ids are
//! durable, so `settle` names the scopes whose spend changed and the edge stores exactly those.

use super::ask::Limit;
pub use super::ask::{AdmitAnswer, AdmitRequest, SettleEntry};
use super::holds::{Hold, Holds};
use super::refusals::{Admission, Denial};
use super::settled::SettledIds;
use super::slice::{self, Remaining, SliceGrant, OUTAGE_GRACE_MS, SLICE_LEASE_MS};
use super::window::MinuteWindow;
use crate::config::SortedMap;
use crate::usage::spend::Spend;
use serde::{Deserialize, Serialize};

/// End users kept in memory before idle ones (nothing in their current minute, nothing held)
/// are dropped; their spend stays in storage and is read again when they return.
pub const MAX_END_USERS_IN_MEMORY: usize = 10_000;
/// A reservation lasts this long past the request budget (its lifetime), and one lifetime past
/// its last renewal by a request still running (`lease`); released then if its record never
/// came.
pub const RELEASE_MARGIN_MS: u64 = 10_000;

/// A scope's storage identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "scope", content = "id")]
pub enum ScopeId {
    Tenant,
    Key(String),
    EndUser(String),
}

impl ScopeId {
    /// The Durable Object storage key of this scope's spend.
    pub fn storage_key(&self) -> String {
        match self {
            Self::Tenant => "spend:tenant".to_owned(),
            Self::Key(id) => format!("spend:key:{id}"),
            Self::EndUser(u) => format!("spend:user:{u}"),
        }
    }
}

pub const KEY_SPEND_PREFIX: &str = "spend:key:";

#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub spend: Spend,
    pub(super) requests: MinuteWindow,
    pub(super) tokens: MinuteWindow,
    pub(super) holds: Holds,
}

impl Scope {
    /// `Some(retry_after)` when this limit refuses one more request.
    fn refusal(&mut self, limit: Limit, now_ms: u64) -> Option<Option<u64>> {
        let (w, held, limit) = match limit {
            Limit::Budget(b) => {
                let held = self.spend.in_period(b.period, now_ms) + self.holds.usd();
                return b.reached(held).then_some(None);
            }
            Limit::Requests(n) => (&mut self.requests, self.holds.requests(), n),
            Limit::Tokens(n) => (&mut self.tokens, self.holds.tokens(), n),
        };
        (w.total(now_ms).saturating_add(held) >= limit)
            .then(|| Some(w.retry_after_secs(now_ms, limit.saturating_sub(held))))
    }

    /// What this limit has left after every hold.
    fn remaining(&mut self, limit: Limit, now_ms: u64) -> Remaining {
        match limit {
            Limit::Budget(b) => Remaining {
                usd: Some(b.usd - self.spend.in_period(b.period, now_ms) - self.holds.usd()),
                ..Remaining::default()
            },
            Limit::Requests(n) => Remaining {
                requests: Some(
                    n.saturating_sub(self.requests.total(now_ms))
                        .saturating_sub(self.holds.requests()),
                ),
                ..Remaining::default()
            },
            Limit::Tokens(n) => Remaining {
                tokens: Some(
                    n.saturating_sub(self.tokens.total(now_ms))
                        .saturating_sub(self.holds.tokens()),
                ),
                ..Remaining::default()
            },
        }
    }
}

/// A hold released at its expiry, unsettled: logged by the edge.
#[derive(Debug, Clone, PartialEq)]
pub struct Released {
    pub scope: ScopeId,
    pub id: String,
    pub hold: Hold,
}

/// Every scope of one tenant that the ledger has loaded.
#[derive(Debug, Default)]
pub struct Ledger {
    pub(super) scopes: SortedMap<ScopeId, Scope>,
    pub(super) settled: SettledIds,
    released: Vec<Released>,
    /// The earliest expiry of any hold (a scan visits every scope, so it runs only then).
    pub(super) next_expiry: Option<u64>,
}

impl Ledger {
    pub fn is_loaded(&self, id: &ScopeId) -> bool {
        self.scopes.contains_key(id)
    }

    /// Installs a scope's stored spend (nothing stored: nothing spent). A scope already loaded
    /// is kept: memory is never older than storage.
    pub fn load(&mut self, id: ScopeId, spend: Option<Spend>) {
        self.scopes.entry(id).or_insert_with(|| Scope {
            spend: spend.unwrap_or_default(),
            ..Scope::default()
        });
    }

    pub fn spend(&self, id: &ScopeId) -> Option<Spend> {
        self.scopes.get(id).map(|s| s.spend)
    }

    /// Holds released unsettled since the last call, for the log.
    pub fn take_released(&mut self) -> Vec<Released> {
        std::mem::take(&mut self.released)
    }

    pub(super) fn expire_holds(&mut self, now_ms: u64) {
        if self.next_expiry.is_none_or(|at| now_ms < at) {
            return;
        }
        self.next_expiry = None;
        for (id, scope) in self.scopes.iter_mut() {
            for (hold_id, hold) in scope.holds.expire(now_ms) {
                self.released.push(Released {
                    scope: id.clone(),
                    id: hold_id,
                    hold,
                });
            }
            self.next_expiry = min_of(self.next_expiry, scope.holds.next_expiry(), u64::min);
        }
    }

    /// Admission alone (no slice), as `acquire` decides it.
    #[cfg(test)]
    pub fn admit(&mut self, req: &AdmitRequest, now_ms: u64) -> Admission {
        self.acquire(req, now_ms).verdict
    }

    /// Takes back the returned slices; then, if `request_id` is set, admits that request (every
    /// limit checked against counts plus holds; an admitted request counts toward each request
    /// rate at once and holds its reservation until it settles; a refused one counts toward
    /// nothing); then, if asked and no limit is nearly spent, grants a slice. Scopes not loaded
    /// count as empty.
    pub fn acquire(&mut self, req: &AdmitRequest, now_ms: u64) -> AdmitAnswer {
        for id in req.scopes() {
            self.load(id, None);
        }
        self.expire_holds(now_ms);
        let drain_until = now_ms.saturating_add(req.release_after());
        for ret in &req.returns {
            for id in &ret.scopes {
                if let Some(scope) = self.scopes.get_mut(id) {
                    scope.holds.returned(ret, drain_until);
                }
            }
        }
        if !req.returns.is_empty() {
            self.next_expiry = min_of(self.next_expiry, Some(drain_until), u64::min);
        }
        let limits = req.limits();
        let held = held_scopes(&limits);
        if let Some(request_id) = &req.request_id {
            for (id, limit, refusal) in &limits {
                let over = self
                    .scopes
                    .get_mut(id)
                    .and_then(|s| s.refusal(*limit, now_ms));
                if let Some(retry_after_secs) = over {
                    return AdmitAnswer {
                        verdict: Admission::Deny {
                            denial: *refusal,
                            retry_after_secs,
                        },
                        slice: None,
                    };
                }
            }
            let counted = [
                Some(ScopeId::Key(req.key_id.clone())),
                req.end_user
                    .as_ref()
                    .map(|(u, _)| ScopeId::EndUser(u.clone())),
            ];
            for id in counted.into_iter().flatten() {
                if let Some(s) = self.scopes.get_mut(&id) {
                    s.requests.add(now_ms, 1);
                }
            }
            let hold = Hold::reserving(req.need, drain_until);
            self.place(&held, request_id, &hold);
        }
        let slice = req
            .slice_id
            .as_ref()
            .and_then(|id| self.grant_slice(req, id, &limits, &held, now_ms));
        AdmitAnswer {
            verdict: Admission::Admit,
            slice,
        }
    }

    fn place(&mut self, held: &[ScopeId], id: &str, hold: &Hold) {
        self.next_expiry = min_of(self.next_expiry, Some(hold.expires_ms), u64::min);
        for scope in held {
            if let Some(s) = self.scopes.get_mut(scope) {
                s.holds.place(id, hold.clone());
            }
        }
    }

    fn grant_slice(
        &mut self,
        req: &AdmitRequest,
        id: &str,
        limits: &[(ScopeId, Limit, Denial)],
        held: &[ScopeId],
        now_ms: u64,
    ) -> Option<SliceGrant> {
        let mut left = Remaining::default();
        for (scope, limit, _) in limits {
            let r = self.scopes.get_mut(scope)?.remaining(*limit, now_ms);
            left.requests = min_of(left.requests, r.requests, u64::min);
            left.tokens = min_of(left.tokens, r.tokens, u64::min);
            left.usd = min_of(left.usd, r.usd, f64::min);
        }
        let allowance = slice::size(left, req.need)?;
        let until_ms = now_ms.saturating_add(SLICE_LEASE_MS);
        let hold = Hold {
            requests: allowance.requests,
            tokens: allowance.tokens.unwrap_or(0),
            usd: allowance.usd.unwrap_or(0.0),
            expires_ms: until_ms
                .saturating_add(OUTAGE_GRACE_MS)
                .saturating_add(req.release_after()),
        };
        self.place(held, id, &hold);
        Some(SliceGrant {
            id: id.to_owned(),
            until_ms,
            allowance,
        })
    }

    /// Drops idle end users from memory once there are more than `MAX_END_USERS_IN_MEMORY`.
    pub fn forget_idle_end_users(&mut self, now_ms: u64) {
        let users = self
            .scopes
            .keys()
            .filter(|k| matches!(k, ScopeId::EndUser(_)))
            .count();
        if users > MAX_END_USERS_IN_MEMORY {
            let idle_user = |id: &ScopeId, s: &mut Scope| {
                matches!(id, ScopeId::EndUser(_))
                    && s.requests.is_idle(now_ms)
                    && s.tokens.is_idle(now_ms)
                    && s.holds.is_empty()
            };
            self.scopes.retain(|id, s| !idle_user(id, s));
        }
    }
}

/// The scopes holds are placed on: those with a limit, each once.
fn held_scopes(limits: &[(ScopeId, Limit, Denial)]) -> Vec<ScopeId> {
    let mut s: Vec<ScopeId> = limits.iter().map(|(id, _, _)| id.clone()).collect();
    crate::config::sort::sort(&mut s);
    s.dedup();
    s
}

fn min_of<T: Copy>(a: Option<T>, b: Option<T>, min: fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(min(a, b)),
        (a, b) => a.or(b),
    }
}
