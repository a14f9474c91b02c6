//! Calls of routes that do work per call without going upstream, counted against the key's
//! `rpm`. A caller request's own admission is `request::admit`.

use super::http::{self, HttpReply};
use super::ledger_client;
use super::metrics::Metrics;
use super::own_poll::own_poll;
use crate::api::ApiError;
use crate::config::CallerKey;
use crate::governance::{Admission, AdmitRequest};
use crate::request::admit::Denied;
use crate::surfaces::Surface;
use worker::Env;

/// A denial as the route's answer, with `Retry-After` for a rate limit.
pub fn denied_response(denied: &Denied, surface: Surface) -> HttpReply {
    let resp = http::error_in(surface, &denied.error).map_err(|_| ApiError::internal())?;
    if let Some(secs) = denied.retry_after_secs {
        resp.headers()
            .set("retry-after", &secs.to_string())
            .map_err(|_| ApiError::internal())?;
    }
    Ok(resp)
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
) -> Result<(), Denied> {
    let Some(ask) = AdmitRequest::call(&key.id, &key.policy, route) else {
        return Ok(());
    };
    match own_poll(ledger_client::admit_call(env, &key.tenant, &ask, metrics)).await {
        Admission::Admit => Ok(()),
        Admission::Deny {
            denial: refusal,
            retry_after_secs,
        } => Err(Denied::of(refusal, retry_after_secs)),
    }
}
