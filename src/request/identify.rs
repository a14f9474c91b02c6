//! Who is calling: the caller key from `Authorization: Bearer` or, as Anthropic's SDKs send it,
//! `x-api-key`; then its tenant's config. A token no minted key can be (its shape, or a MAC that
//! fails) is refused before any lookup, so a forged key costs no D1 read.

use super::Incoming;
use crate::api::{ApiError, ErrorKind};
use crate::callers::auth::{bearer, hash_key, may_be_caller_key};
use crate::config::caller_key::CallerKeyMac;
use crate::config::{CallerKey, TenantConfig, TenantId};
use std::rc::Rc;

/// Caller keys and tenant configs, behind the isolate's memo (D1 on a miss).
#[allow(async_fn_in_trait)]
pub trait CallerStore {
    /// The MAC minted keys carry, when the deployment has a key to check it with.
    fn mac(&self) -> Option<CallerKeyMac>;
    /// The caller key whose SHA-256 is `hash`.
    async fn key(&self, hash: &str) -> Result<Option<CallerKey>, ApiError>;
    async fn config(&self, tenant: &TenantId) -> Result<Option<Rc<TenantConfig>>, ApiError>;
}

pub fn invalid_api_key() -> ApiError {
    ApiError::new(ErrorKind::InvalidApiKey, "Missing or invalid API key.")
}

/// The credential a request presents, from its `Authorization` and `x-api-key` headers: `None`
/// when it sends neither; `Some(None)` when `Authorization` is not a bearer token (it wins over
/// `x-api-key`).
pub fn credential<'a>(
    authorization: Option<&'a str>,
    x_api_key: Option<&'a str>,
) -> Option<Option<&'a str>> {
    match (authorization, x_api_key) {
        (Some(auth), _) => Some(bearer(Some(auth))),
        (None, Some(key)) => Some(Some(key)),
        (None, None) => None,
    }
}

/// The credential `incoming` presents (`credential`).
pub fn presented(incoming: &impl Incoming) -> Option<Option<&str>> {
    credential(
        incoming.header("authorization"),
        incoming.header("x-api-key"),
    )
}

/// The caller's key, if the request presents a credential; one that is not a caller key is 401.
pub async fn caller(
    presented: Option<Option<&str>>,
    callers: &impl CallerStore,
) -> Result<Option<CallerKey>, ApiError> {
    let Some(token) = presented else {
        return Ok(None);
    };
    let mac = callers.mac();
    let token = token
        .filter(|k| may_be_caller_key(k, mac.as_ref()))
        .ok_or_else(invalid_api_key)?;
    let found = callers.key(&hash_key(token)).await?;
    found.map(Some).ok_or_else(invalid_api_key)
}

/// The caller key and its tenant's config; without a key, or for a tenant gone, 401.
pub async fn identify(
    presented: Option<Option<&str>>,
    callers: &impl CallerStore,
) -> Result<(CallerKey, Rc<TenantConfig>), ApiError> {
    let key = caller(presented, callers)
        .await?
        .ok_or_else(invalid_api_key)?;
    let cfg = callers
        .config(&key.tenant)
        .await?
        .ok_or_else(invalid_api_key)?;
    Ok((key, cfg))
}
