//! Admit: whether the request may go upstream, once its name resolved (an unknown name costs no
//! rate-limit slot). Only a key or tenant with a limit that needs counters asks the ledger; the
//! answer comes from this isolate's slice with no round trip, or from one call. A refusal for a
//! spent budget is an event and an alert once per scope and window.

use super::ports::LedgerPort;
use crate::api::ApiError;
use crate::config::settings::TenantLimits;
use crate::config::{CallerKey, TenantId};
use crate::events::{Alert, Event};
use crate::governance::admission::RELEASE_MARGIN_MS;
use crate::governance::budget_alert::describe;
use crate::governance::isolate::Via;
use crate::governance::lease::HoldLease;
use crate::governance::refusals::{refused, Denial};
use crate::governance::{Admission, AdmitRequest, HoldRef, Need};

/// How a request's finished record goes to the ledger.
#[derive(Debug, Clone, Default)]
pub struct Governed {
    /// The ledger admitted the request itself (a limit nearly spent): its record is sent at
    /// once, not with the batch.
    pub urgent: bool,
    /// The tenant limits end users: the ledger keeps this end user's spend.
    pub track_end_user: bool,
    /// The reservation the record replaces.
    pub hold: Option<HoldRef>,
    /// The tenant's ledger and the hold a stream renews while it runs (`governance::lease`);
    /// `None` when its hold carries nothing a limit reads.
    pub lease: Option<(TenantId, HoldLease)>,
}

/// The request as admission sees it.
pub struct Admitting<'a> {
    pub tenant: &'a TenantId,
    pub key: &'a CallerKey,
    pub limits: &'a TenantLimits,
    pub end_user: Option<&'a str>,
    pub request_id: &'a str,
    /// The request's reservation (`Need::of_request`).
    pub need: Need,
    /// `REQUEST_BUDGET_MS`: with `RELEASE_MARGIN_MS`, how long its reservation lasts unless the
    /// request, still running, renews it.
    pub request_budget_ms: u64,
}

/// A request admission turned away: the error, and `Retry-After` for a rate limit.
#[derive(Debug)]
pub struct Denied {
    pub error: ApiError,
    pub retry_after_secs: Option<u64>,
}

impl Denied {
    pub fn of(refusal: Denial, retry_after_secs: Option<u64>) -> Self {
        Self {
            error: refused(refusal),
            retry_after_secs,
        }
    }
}

/// Admits `a` or says why not. `now_ms` is read before the ledger is asked, so the hold lasts
/// at least a lifetime from then. A renewal due, or records kept from a failed call, are the
/// ledger port's to send in the background.
pub async fn admit(
    ledger: &impl LedgerPort,
    a: Admitting<'_>,
    now_ms: u64,
) -> Result<Governed, Denied> {
    let governed = Governed {
        track_end_user: a.limits.end_user_limits().is_some(),
        ..Governed::default()
    };
    let Some(mut ask) = AdmitRequest::needed(
        &a.key.id,
        &a.key.policy,
        a.limits.budget,
        a.limits.end_user_limits(),
        a.end_user,
    ) else {
        return Ok(governed);
    };
    ask.need = a.need;
    ask.request_id = Some(a.request_id.to_owned());
    ask.release_after_ms = a.request_budget_ms.saturating_add(RELEASE_MARGIN_MS);
    let admission = ledger.admit(a.tenant, ask.clone()).await;
    let lease = admission
        .hold
        .as_ref()
        .and_then(|h| HoldLease::of(&ask, h, now_ms))
        .map(|l| (a.tenant.clone(), l));
    if admission.via == (Via::Slice { renew: true }) {
        ledger.renew(a.tenant, ask);
    }
    if admission.flush {
        ledger.flush_kept(a.tenant);
    }
    match admission.verdict {
        Admission::Admit => Ok(Governed {
            urgent: admission.via == Via::Ledger,
            lease,
            hold: admission.hold,
            ..governed
        }),
        Admission::Deny {
            denial: refusal,
            retry_after_secs,
        } => {
            budget_exceeded(ledger, &a, refusal, retry_after_secs, now_ms);
            Err(Denied::of(refusal, retry_after_secs))
        }
    }
}

/// A spent budget is an event, `budget.exceeded`, and an alert: once per scope and window in
/// this isolate (`governance::budget_alert`).
fn budget_exceeded(
    ledger: &impl LedgerPort,
    a: &Admitting<'_>,
    refusal: Denial,
    retry_after_secs: Option<u64>,
    now: u64,
) {
    let Some((scope, reason)) = describe(refusal, &a.key.id, a.end_user) else {
        return;
    };
    let tenant = a.tenant.as_str();
    if !ledger.first_report(tenant, &scope, now, retry_after_secs) {
        return;
    }
    let alert = Alert::BudgetExceeded {
        tenant,
        reason: &reason,
        time: now,
    };
    let body = Event::Alert(alert).to_line();
    ledger.alert(a.tenant, "budget.exceeded", now, body);
}
