//! Governance on the request path, before the cascade: the key's allow-list (from the cached
//! policy, no round trip, checked before the name is resolved so a scoped key learns nothing of
//! names it may not use), then, only when the key or the tenant has a limit that needs counters,
//! one call to the tenant's ledger.

use super::http::{self, HttpReply};
use super::ledger_client;
use super::metrics::Metrics;
use crate::api::ApiError;
use crate::config::settings::TenantLimits;
use crate::config::{CallerKey, TenantId};
use crate::governance::refusals::{check_model, refused};
use crate::governance::{AdmitRequest, Verdict};
use crate::surfaces::Surface;
use worker::Env;

/// How a request's finished record goes to the ledger.
#[derive(Debug, Clone, Copy, Default)]
pub struct Governed {
    /// The request was held to a limit: its record is sent at once, not with the batch.
    pub urgent: bool,
    /// The tenant limits end users: the ledger keeps this end user's spend.
    pub track_end_user: bool,
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

/// The allow-list: `requested` is the name as sent (or the tenant's default model).
pub fn allowed(key: &CallerKey, requested: &str) -> Result<(), ApiError> {
    check_model(&key.policy, requested)
}

/// Decides whether the request may go upstream, once its name resolved (an unknown name costs
/// no rate-limit slot).
pub async fn govern(
    env: &Env,
    tenant: &TenantId,
    key: &CallerKey,
    limits: &TenantLimits,
    end_user: Option<&str>,
    metrics: &Metrics,
) -> Result<Governed, Refused> {
    let governed = Governed {
        urgent: false,
        track_end_user: limits.end_user_limits().is_some(),
    };
    let Some(ask) = AdmitRequest::needed(
        &key.id,
        &key.policy,
        limits.budget,
        limits.end_user_limits(),
        end_user,
    ) else {
        return Ok(governed);
    };
    match ledger_client::admit(env, tenant, &ask, metrics).await {
        Verdict::Admit => Ok(Governed {
            urgent: true,
            ..governed
        }),
        Verdict::Refuse {
            refusal,
            retry_after_secs,
        } => Err(Refused {
            error: refused(refusal),
            retry_after_secs,
        }),
    }
}
