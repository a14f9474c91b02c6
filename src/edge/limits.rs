//! Governance on the request path, before the cascade: the key's allow-list (from the cached
//! policy, no round trip, checked before the name is resolved so a scoped key learns nothing of
//! names it may not use), then, only when the key or the tenant has a limit that needs counters,
//! admission with the request's reservation: from this isolate's slice with no round trip, else
//! one call to the tenant's ledger (`ledger_client`).

use super::http::{self, HttpReply};
use super::ledger_client;
use super::metrics::Metrics;
use super::own_poll::own_poll;
use crate::api::ApiError;
use crate::config::settings::TenantLimits;
use crate::config::{CallerKey, TenantId};
use crate::governance::admission::RELEASE_MARGIN_MS;
use crate::governance::isolate::Via;
use crate::governance::lease::HoldLease;
use crate::governance::refusals::refused;
use crate::governance::{AdmitRequest, HoldRef, Need, Verdict};
use crate::surfaces::Surface;
use worker::{Context, Env};

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

/// A refusal on its way out: the error, and `Retry-After` for a rate limit.
pub struct Refused {
    pub error: ApiError,
    pub retry_after_secs: Option<u64>,
}

impl Refused {
    pub fn response(&self, surface: Surface) -> HttpReply {
        let resp = http::error_in(surface, &self.error).map_err(|_| ApiError::internal())?;
        if let Some(secs) = self.retry_after_secs {
            resp.headers()
                .set("retry-after", &secs.to_string())
                .map_err(|_| ApiError::internal())?;
        }
        Ok(resp)
    }
}

/// Decides whether the request may go upstream, once its name resolved (an unknown name costs
/// no rate-limit slot). A renewal due, or records kept from a failed call, go under `waitUntil`.
pub async fn govern(
    env: &Env,
    ctx: &Context,
    a: Admitting<'_>,
    metrics: &Metrics,
) -> Result<Governed, Refused> {
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
    // Before the ledger reads it: the hold lasts at least a lifetime from then.
    let asked_ms = super::http::now_ms();
    // Only a key or tenant with limits gets here: its code compiles on its first use (own_poll.rs).
    let admission = own_poll(ledger_client::admit(env, a.tenant, ask.clone(), metrics)).await;
    let lease = admission
        .hold
        .as_ref()
        .and_then(|h| HoldLease::of(&ask, h, asked_ms))
        .map(|l| (a.tenant.clone(), l));
    if admission.via == (Via::Slice { renew: true }) {
        let (env, tenant) = (env.clone(), a.tenant.clone());
        ctx.wait_until(async move { ledger_client::renew(&env, &tenant, ask).await });
    }
    if admission.flush {
        let (env, tenant) = (env.clone(), a.tenant.clone());
        ctx.wait_until(async move { ledger_client::flush_kept(&env, &tenant).await });
    }
    match admission.verdict {
        Verdict::Admit => Ok(Governed {
            urgent: admission.via == Via::Ledger,
            lease,
            hold: admission.hold,
            ..governed
        }),
        Verdict::Refuse {
            refusal,
            retry_after_secs,
        } => {
            budget_exceeded(env, ctx, &a, refusal, retry_after_secs);
            Err(Refused {
                error: refused(refusal),
                retry_after_secs,
            })
        }
    }
}

/// A call of a route that does work per call without going upstream (`/v1/health` with a key,
/// `/v1/models/metrics`, `/v1/messages/count_tokens`), counted against the key's `rpm` as a
/// request without tokens (`AdmitRequest::call`): past it, the route's 429 with `Retry-After`.
/// A key without an `rpm` asks the ledger nothing.
pub async fn count_call(
    env: &Env,
    key: &CallerKey,
    route: &str,
    metrics: &Metrics,
) -> Result<(), Refused> {
    let Some(ask) = AdmitRequest::call(&key.id, &key.policy, route) else {
        return Ok(());
    };
    match own_poll(ledger_client::admit_call(env, &key.tenant, &ask, metrics)).await {
        Verdict::Admit => Ok(()),
        Verdict::Refuse {
            refusal,
            retry_after_secs,
        } => Err(Refused {
            error: refused(refusal),
            retry_after_secs,
        }),
    }
}

thread_local! {
    static BUDGET_REPORTED: std::cell::RefCell<crate::governance::budget_alert::Reported> =
        std::cell::RefCell::default();
}

/// A spent budget is an event, `budget.exceeded`, and an alert: once per scope and
/// window in this isolate (`governance::budget_alert`), stored under `waitUntil`.
fn budget_exceeded(
    env: &Env,
    ctx: &Context,
    a: &Admitting<'_>,
    refusal: crate::governance::refusals::Refusal,
    retry_after_secs: Option<u64>,
) {
    use crate::governance::budget_alert::describe;
    let Some((scope, reason)) = describe(refusal, &a.key.id, a.end_user) else {
        return;
    };
    let now = super::http::now_ms();
    let tenant = a.tenant.as_str();
    if !BUDGET_REPORTED.with(|r| r.borrow_mut().first(tenant, &scope, now, retry_after_secs)) {
        return;
    }
    let alert = crate::events::Alert::BudgetExceeded {
        tenant,
        reason: &reason,
        time: now,
    };
    let body = crate::events::Event::Alert(alert).to_line();
    let (env, tenant) = (env.clone(), a.tenant.to_string());
    ctx.wait_until(async move {
        super::alerts::publish(&env, &tenant, "budget.exceeded", now, &body).await;
    });
}
