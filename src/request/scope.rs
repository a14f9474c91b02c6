//! What the key may ask: its allow-list, checked before the name is resolved so a scoped key
//! learns nothing of names it may not use; and the end user a tenant may require, refused
//! before any ledger or upstream call so nothing is counted.

use super::Incoming;
use crate::api::ApiError;
use crate::config::{CallerKey, TenantConfig};
use crate::governance::refusals::check_model;
use crate::routing::auto;
use crate::surfaces::Inbound;
use crate::usage::{end_user, PendingUsage};

/// The allow-list: `requested` is the name as sent (or the tenant's default model). An `auto`
/// name is allowed as `auto::allowed_by` says (a scoped key lists the ones it may call), and
/// ranks only the models the key may use.
pub fn allowed(key: &CallerKey, requested: &str) -> Result<(), ApiError> {
    match auto::parse(requested) {
        Some(name) if auto::allowed_by(name, requested, |n| key.policy.allows(n)) => Ok(()),
        _ => check_model(&key.policy, requested),
    }
}

/// The request's usage record as far as it is known before an answer: who asked, for whom.
pub fn scope(
    incoming: &impl Incoming,
    key: &CallerKey,
    cfg: &TenantConfig,
    inbound: &Inbound,
    request_id: &str,
) -> Result<PendingUsage, ApiError> {
    allowed(key, inbound.model())?;
    let user = end_user(incoming.header("x-cognigate-user"), inbound.chat());
    let required = cfg.settings.limits.end_user_required();
    crate::usage::end_user::require(required, user.as_deref())?;
    Ok(PendingUsage {
        request_id: request_id.to_owned(),
        tenant: cfg.tenant.clone(),
        key_id: key.id.clone(),
        end_user: user,
        requested: inbound.model().to_owned(),
        generation: key.generation,
    })
}
