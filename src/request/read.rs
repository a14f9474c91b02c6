//! The body, within its limits: its size first (413), then its depth and value count as it is
//! parsed. Nothing reads the body before this stage, and every later reader (the cache digest,
//! the surface translation, the facts rules read) sees only a request that passed it.

use super::Incoming;
use crate::api::{ApiError, ChatRequest};
use crate::config::TenantConfig;
use crate::surfaces::{Inbound, Surface};

/// The deployment's limits on a caller's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// `MAX_CHAT_BODY_BYTES`.
    pub bytes: usize,
    /// `MAX_CHAT_JSON_VALUES`.
    pub values: usize,
}

/// The request in its surface's terms, and the response cache's digest of it (taken from the
/// parsed, checked request, before the surface translates it).
pub async fn read<D>(
    incoming: &impl Incoming,
    surface: Surface,
    limits: BodyLimits,
    cfg: &TenantConfig,
    digest: D,
) -> Result<(Inbound, Option<[u8; 32]>), ApiError>
where
    D: FnOnce(&TenantConfig, &ChatRequest) -> Option<[u8; 32]>,
{
    let body = incoming.body(limits.bytes).await?;
    let default_model = cfg.settings.limits.default_model.as_ref();
    let default_model = default_model.map(|m| m.as_str());
    // The request keeps the body and points into it: held once, never as a tree.
    let sent = ChatRequest::parse_with_default(body, limits.values, default_model)?;
    let digest = digest(cfg, &sent);
    let beta = incoming.header("anthropic-beta").map(str::to_owned);
    let inbound = Inbound::of_request(surface, sent, limits.values, beta)?;
    Ok((inbound, digest))
}
