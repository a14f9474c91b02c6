//! Who is calling: the caller key from `Authorization: Bearer` or `x-api-key`, looked up in the
//! cached caller-key index, and its tenant's config.

use super::deployment::Deployment;
use super::http::{header, RawRequest};
use super::metrics::Metrics;
use super::store;
use crate::api::{ApiError, ErrorKind};
use crate::callers::auth::{bearer, hash_key, may_be_caller_key};
use crate::config::{CallerKey, TenantConfig};
use std::rc::Rc;
use worker::{Context, Env};

pub(super) fn invalid_api_key() -> ApiError {
    ApiError::new(ErrorKind::InvalidApiKey, "Missing or invalid API key.")
}

/// Who is calling, from the cached caller-key index. The key comes as `Authorization: Bearer`
/// or, as Anthropic's SDKs send it, as `x-api-key`.
pub(super) async fn caller(
    req: &impl RawRequest,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    metrics: &Metrics,
) -> Result<Option<CallerKey>, ApiError> {
    let auth = header(req, "authorization");
    let key = match (auth, header(req, "x-api-key")) {
        (Some(auth), _) => bearer(Some(&auth)).map(str::to_owned),
        (None, Some(key)) => Some(key),
        (None, None) => return Ok(None),
    };
    // A token no minted key can be (its shape, or a MAC that fails) costs no D1 query.
    let mac = store::caller_key_mac(env);
    let key = key
        .filter(|k| may_be_caller_key(k, mac.as_ref()))
        .ok_or_else(invalid_api_key)?;
    let key = key.as_str();
    let found = store::caller_key(env, ctx, &hash_key(key), &dep.defaults, metrics).await?;
    found.map(Some).ok_or_else(invalid_api_key)
}

/// The caller key and its tenant's config; without a key, 401.
pub(super) async fn caller_config(
    req: &impl RawRequest,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    metrics: &Metrics,
) -> Result<(CallerKey, Rc<TenantConfig>), ApiError> {
    let key = caller(req, env, ctx, dep, metrics)
        .await?
        .ok_or_else(invalid_api_key)?;
    let cfg = store::tenant_config(env, ctx, &key.tenant, &dep.defaults, metrics)
        .await?
        .ok_or_else(invalid_api_key)?;
    Ok((key, cfg))
}
