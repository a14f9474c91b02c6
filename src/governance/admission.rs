//! The ledger's decisions: whether a request may go upstream (`admit`), and what a finished
//! request adds to each scope it belongs to (`settle`). One ledger per tenant holds every scope
//! of that tenant: the tenant itself, each caller key, each end user.
//!
//! Request counts and token counts of the rolling minute live in memory only (an object that is
//! evicted forgets at most one minute of them); spend is durable, so `settle` names the scopes
//! whose spend changed and the edge stores exactly those.

use super::window::MinuteWindow;
use crate::api::error::ErrorKind;
use crate::config::policy::{Budget, EndUserLimits, KeyPolicy};
use crate::usage::spend::Spend;
use crate::usage::UsageRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// End users kept in memory before idle ones (nothing in their current minute) are dropped;
/// their spend stays in storage and is read again when they return.
pub const MAX_END_USERS_IN_MEMORY: usize = 10_000;

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

/// The limits one request is held to, sent by the isolate (which has them from its cached
/// config), so the ledger needs no config of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdmitRequest {
    pub key_id: String,
    pub key_rpm: Option<u32>,
    pub key_tpm: Option<u64>,
    pub key_budget: Option<Budget>,
    pub tenant_budget: Option<Budget>,
    /// The end user and the tenant's per-end-user limits, when both exist.
    pub end_user: Option<(String, EndUserLimits)>,
}

impl AdmitRequest {
    /// What the ledger must be asked for this request, or `None` when nothing it holds can
    /// refuse it: then the request makes no round trip for admission at all.
    pub fn needed(
        key_id: &str,
        key: &KeyPolicy,
        tenant_budget: Option<Budget>,
        end_user_limits: Option<EndUserLimits>,
        end_user: Option<&str>,
    ) -> Option<Self> {
        let end_user = end_user
            .zip(end_user_limits)
            .map(|(u, l)| (u.to_owned(), l));
        let needed = key.is_limited() || tenant_budget.is_some() || end_user.is_some();
        needed.then(|| Self {
            key_id: key_id.to_owned(),
            key_rpm: key.rpm,
            key_tpm: key.tpm,
            key_budget: key.budget,
            tenant_budget,
            end_user,
        })
    }

    /// The scopes the ledger must have loaded to decide.
    pub fn scopes(&self) -> Vec<ScopeId> {
        let mut s = vec![ScopeId::Tenant, ScopeId::Key(self.key_id.clone())];
        if let Some((u, _)) = &self.end_user {
            s.push(ScopeId::EndUser(u.clone()));
        }
        s
    }
}

/// Why a request was refused, each with its status and error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    KeyBudget,
    TenantBudget,
    EndUserBudget,
    KeyRpm,
    KeyTpm,
    EndUserRpm,
}

impl Refusal {
    /// Status, `type` and `code` come from the one error vocabulary.
    pub fn error_kind(self) -> ErrorKind {
        match self {
            Self::KeyBudget => ErrorKind::BudgetExceeded,
            Self::TenantBudget => ErrorKind::TenantBudgetExceeded,
            Self::EndUserBudget => ErrorKind::EndUserBudgetExceeded,
            Self::KeyRpm | Self::KeyTpm | Self::EndUserRpm => ErrorKind::RateLimitExceeded,
        }
    }

    pub fn status(self) -> u16 {
        self.error_kind().parts().0
    }

    pub fn code(self) -> &'static str {
        self.error_kind().parts().2
    }

    pub fn message(self) -> &'static str {
        match self {
            Self::KeyBudget => "This API key has spent its budget for the current period.",
            Self::TenantBudget => "The tenant has spent its budget for the current period.",
            Self::EndUserBudget => "This end user has spent their budget for the current period.",
            Self::KeyRpm => "This API key is over its requests-per-minute limit.",
            Self::KeyTpm => "This API key is over its tokens-per-minute limit.",
            Self::EndUserRpm => "This end user is over their requests-per-minute limit.",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Verdict {
    Admit,
    Refuse {
        refusal: Refusal,
        /// Whole seconds, at least 1, on rate-limit refusals.
        retry_after_secs: Option<u64>,
    },
}

/// One finished request as the ledger receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettleEntry {
    pub record: UsageRecord,
    /// The tenant limits end users: their spend is kept (otherwise it is not, so a tenant
    /// without end-user limits stores nothing per end user).
    pub track_end_user: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub spend: Spend,
    requests: MinuteWindow,
    tokens: MinuteWindow,
}

impl Scope {
    fn over_budget(&self, budget: Option<Budget>, now_ms: u64) -> bool {
        budget.is_some_and(|b| b.reached(self.spend.in_period(b.period, now_ms)))
    }

    fn rate_refusal(&mut self, window: Which, limit: Option<u64>, now_ms: u64) -> Option<u64> {
        let limit = limit?;
        let w = match window {
            Which::Requests => &mut self.requests,
            Which::Tokens => &mut self.tokens,
        };
        (w.total(now_ms) >= limit).then(|| w.retry_after_secs(now_ms, limit))
    }
}

#[derive(Clone, Copy)]
enum Which {
    Requests,
    Tokens,
}

/// Every scope of one tenant that the ledger has loaded.
#[derive(Debug, Default)]
pub struct Ledger {
    scopes: BTreeMap<ScopeId, Scope>,
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

    /// Budgets first (the tenant's, the key's, the end user's), then rates (the key's requests
    /// and tokens, the end user's requests). An admitted request counts toward every request
    /// rate at once; a refused one counts toward nothing. Scopes not loaded count as empty.
    pub fn admit(&mut self, req: &AdmitRequest, now_ms: u64) -> Verdict {
        let key_id = ScopeId::Key(req.key_id.clone());
        let user_id = req
            .end_user
            .as_ref()
            .map(|(u, _)| ScopeId::EndUser(u.clone()));
        for id in req.scopes() {
            self.load(id, None);
        }
        let refuse = |refusal, retry_after_secs| Verdict::Refuse {
            refusal,
            retry_after_secs,
        };
        let budget_checks = [
            (ScopeId::Tenant, req.tenant_budget, Refusal::TenantBudget),
            (key_id.clone(), req.key_budget, Refusal::KeyBudget),
        ]
        .into_iter()
        .chain(
            req.end_user
                .as_ref()
                .zip(user_id.clone())
                .map(|((_, l), id)| (id, l.budget, Refusal::EndUserBudget)),
        );
        for (id, budget, refusal) in budget_checks {
            if self
                .scopes
                .get(&id)
                .is_some_and(|s| s.over_budget(budget, now_ms))
            {
                return refuse(refusal, None);
            }
        }
        let rate_checks = [
            (
                key_id.clone(),
                Which::Requests,
                req.key_rpm.map(u64::from),
                Refusal::KeyRpm,
            ),
            (key_id.clone(), Which::Tokens, req.key_tpm, Refusal::KeyTpm),
        ]
        .into_iter()
        .chain(
            req.end_user
                .as_ref()
                .zip(user_id.clone())
                .map(|((_, l), id)| {
                    (
                        id,
                        Which::Requests,
                        l.rpm.map(u64::from),
                        Refusal::EndUserRpm,
                    )
                }),
        );
        for (id, which, limit, refusal) in rate_checks {
            let wait = self
                .scopes
                .get_mut(&id)
                .and_then(|s| s.rate_refusal(which, limit, now_ms));
            if let Some(secs) = wait {
                return refuse(refusal, Some(secs));
            }
        }
        for id in [Some(key_id), user_id].into_iter().flatten() {
            if let Some(s) = self.scopes.get_mut(&id) {
                s.requests.add(now_ms, 1);
            }
        }
        Verdict::Admit
    }

    /// The scopes a finished request settles into; those not loaded must be loaded first.
    pub fn scopes_of(entry: &SettleEntry) -> Vec<ScopeId> {
        let mut s = vec![ScopeId::Tenant, ScopeId::Key(entry.record.key_id.clone())];
        if let Some(u) = entry
            .record
            .end_user
            .as_ref()
            .filter(|_| entry.track_end_user)
        {
            s.push(ScopeId::EndUser(u.clone()));
        }
        s
    }

    /// Adds a finished request's tokens and cost to each of its scopes; returns the scopes
    /// whose spend changed (to be stored). Tokens count toward `tpm` now, when they are known.
    pub fn settle(&mut self, entry: &SettleEntry, now_ms: u64) -> Vec<ScopeId> {
        let tokens = entry.record.tokens.map(|t| t.total()).unwrap_or(0);
        let cost = entry.record.cost_usd.unwrap_or(0.0);
        let mut changed = Vec::new();
        for id in Self::scopes_of(entry) {
            let scope = self.scopes.entry(id.clone()).or_default();
            scope.tokens.add(now_ms, tokens);
            let before = scope.spend;
            scope.spend.add(now_ms, cost);
            if scope.spend != before {
                changed.push(id);
            }
        }
        changed
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
            };
            self.scopes.retain(|id, s| !idle_user(id, s));
        }
    }
}
