//! What crosses between an isolate and its tenant's ledger: the limits a request is held to
//! with what to admit, hold and give back (`AdmitRequest`), the answer, and a finished request
//! (`SettleEntry`).

use super::admission::{ScopeId, RELEASE_MARGIN_MS};
use super::refusals::{Admission, Denial};
use super::reserve::{HoldRef, Need};
use super::slice::{SliceGrant, SliceReturn};
use crate::config::policy::{Budget, EndUserLimits, KeyPolicy};
use crate::usage::UsageRecord;
use serde::{Deserialize, Serialize};

/// The limits one request is held to, sent by the isolate (which has them from its cached
/// config), so the ledger needs no config of its own; with what to admit, hold and give back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdmitRequest {
    pub key_id: String,
    pub key_rpm: Option<u32>,
    pub key_tpm: Option<u64>,
    pub key_budget: Option<Budget>,
    pub tenant_budget: Option<Budget>,
    /// The end user and the tenant's per-end-user limits, when both exist.
    pub end_user: Option<(String, EndUserLimits)>,
    /// The request's reservation (and the unit a slice is sized in).
    #[serde(default)]
    pub need: Need,
    /// The request to admit; `None` renews a slice only.
    #[serde(default)]
    pub request_id: Option<String>,
    /// Asks for a slice, to be held under this id.
    #[serde(default)]
    pub slice_id: Option<String>,
    /// Slices this isolate gives back.
    #[serde(default)]
    pub returns: Vec<SliceReturn>,
    /// A reservation's lifetime: the request budget plus a margin; a request still running
    /// renews it (`lease`).
    #[serde(default)]
    pub release_after_ms: u64,
}

/// The ledger's answer to an `AdmitRequest`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdmitAnswer {
    pub verdict: Admission,
    #[serde(default)]
    pub slice: Option<SliceGrant>,
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
            need: Need::default(),
            request_id: None,
            slice_id: None,
            returns: Vec::new(),
            release_after_ms: 0,
        })
    }

    /// A call of a route that does work without going upstream (`/v1/health` with a key,
    /// `/v1/models/metrics`, `/v1/messages/count_tokens`): a request without tokens, held to the
    /// key's `rpm` alone, or `None` when the key has none (then the call asks nothing). It holds
    /// nothing and settles nothing: the ledger counts it at admission, and it never takes from
    /// or asks for a slice.
    pub fn call(key_id: &str, key: &KeyPolicy, call_id: &str) -> Option<Self> {
        Some(Self {
            key_id: key_id.to_owned(),
            key_rpm: Some(key.rpm?),
            key_tpm: None,
            key_budget: None,
            tenant_budget: None,
            end_user: None,
            need: Need::default(),
            request_id: Some(call_id.to_owned()),
            slice_id: None,
            returns: Vec::new(),
            release_after_ms: 0,
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

    /// Held to the same limits (a slice is only used for requests held to the limits it was
    /// granted under: a changed policy asks the ledger again).
    pub fn same_limits(&self, other: &Self) -> bool {
        self.limit_fields() == other.limit_fields()
    }

    /// Every field that says which limits the request is held to.
    fn limit_fields(&self) -> LimitFields<'_> {
        (
            &self.key_id,
            self.key_rpm,
            self.key_tpm,
            self.key_budget,
            self.tenant_budget,
            &self.end_user,
        )
    }

    pub(super) fn release_after(&self) -> u64 {
        self.release_after_ms.max(RELEASE_MARGIN_MS)
    }

    /// Every limit this request is held to, budgets first (the tenant's, the key's, the end
    /// user's), then rates (the key's requests and tokens, the end user's requests).
    pub(super) fn limits(&self) -> Vec<(ScopeId, Limit, Denial)> {
        let key = || ScopeId::Key(self.key_id.clone());
        let user = self
            .end_user
            .as_ref()
            .map(|(u, l)| (ScopeId::EndUser(u.clone()), l));
        let mut out = Vec::new();
        if let Some(b) = self.tenant_budget {
            out.push((ScopeId::Tenant, Limit::Budget(b), Denial::TenantBudget));
        }
        if let Some(b) = self.key_budget {
            out.push((key(), Limit::Budget(b), Denial::KeyBudget));
        }
        if let Some((id, b)) = user.as_ref().and_then(|(id, l)| Some((id, l.budget?))) {
            out.push((id.clone(), Limit::Budget(b), Denial::EndUserBudget));
        }
        if let Some(n) = self.key_rpm {
            out.push((key(), Limit::Requests(n.into()), Denial::KeyRpm));
        }
        if let Some(n) = self.key_tpm {
            out.push((key(), Limit::Tokens(n), Denial::KeyTpm));
        }
        if let Some((id, n)) = user.as_ref().and_then(|(id, l)| Some((id, l.rpm?))) {
            out.push((id.clone(), Limit::Requests(n.into()), Denial::EndUserRpm));
        }
        out
    }
}

type LimitFields<'a> = (
    &'a String,
    Option<u32>,
    Option<u64>,
    Option<Budget>,
    Option<Budget>,
    &'a Option<(String, EndUserLimits)>,
);

#[derive(Debug, Clone, Copy)]
pub(super) enum Limit {
    Budget(Budget),
    Requests(u64),
    Tokens(u64),
}

/// One finished request as the ledger receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettleEntry {
    pub record: UsageRecord,
    /// The tenant limits end users: their spend is kept (otherwise it is not, so a tenant
    /// without end-user limits stores nothing per end user).
    pub track_end_user: bool,
    /// The reservation the request was admitted under, replaced by its actual charge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<HoldRef>,
    /// Further requests folded into this record by an isolate that could not hand them over
    /// (`retained`): the record's tokens and cost are theirs too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub merged: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SettleEntry {
    pub fn new(record: UsageRecord, track_end_user: bool, hold: Option<HoldRef>) -> Self {
        Self {
            record,
            track_end_user,
            hold,
            merged: 0,
        }
    }
}
