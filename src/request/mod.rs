//! The order of a caller request, plain Rust over ports. The stages run in a fixed order, each
//! from what the ones before it established: identify (who calls), read (the body, within its
//! limits), scope (what the key may ask), resolve, admit, lookup, cascade, answer and bill, the
//! relay of a stream, and finish (`order::serve`). Because the order lives here and the runtime
//! only behind `ports`, a host test states each ordering rule with fakes: a forged key reads
//! nothing, a denied request makes no lookup or upstream call, every path emits one event.

pub mod access_token;
pub mod admit;
pub mod answer;
pub mod conversation;
pub mod deployment;
pub mod finish;
pub mod health_route;
pub mod identify;
pub mod incoming;
pub mod lookup;
pub mod models;
pub mod order;
pub mod ports;
pub mod read;
pub mod reply;
pub mod resolve;
pub mod scope;
pub mod status_refusal;
pub mod stream_copy;
pub mod stream_life;
pub mod trace_end;
pub mod upstream_call;
pub mod upstream_events;

#[cfg(test)]
mod fakes;
#[cfg(test)]
mod front_tests;
#[cfg(test)]
mod resolve_tests;
#[cfg(test)]
mod stream_life_tests;

use crate::api::ApiError;
use crate::config::{CallerKey, TenantConfig, TenantId};
use crate::surfaces::{Inbound, Surface};
use crate::usage::PendingUsage;
pub use identify::CallerStore;
pub use incoming::Incoming;
pub use order::{serve, Deployed};
pub use read::BodyLimits;
use std::rc::Rc;

/// What a request has established so far, for its one log line and its metric: set by each
/// stage as it passes, so a request that stops early is still told as far as it got.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Set once the caller key named its tenant: only such requests are counted.
    pub tenant: Option<TenantId>,
    /// The model name as sent (or the tenant's default), once the body was read.
    pub requested: Option<String>,
    /// `requested` is a name the tenant configured (`routing::configured_name`).
    pub requested_configured: bool,
    /// `params.task` and `params.agent`, once resolve detected them (only when a condition of
    /// the tenant reads them).
    pub task: Option<&'static str>,
    pub agent: Option<&'static str>,
}

/// A request past its first three stages: a known caller, a body within its limits, a model
/// the key may use and, where the tenant requires one, an end user.
pub struct Scoped {
    pub key: CallerKey,
    pub cfg: Rc<TenantConfig>,
    pub inbound: Inbound,
    pub pending: PendingUsage,
    /// The response cache's digest of the checked request, taken before the surface translates
    /// it (`None`: the request cannot be cached).
    pub digest: Option<[u8; 32]>,
}

/// Identify, read, scope, in that order. `digest` sees the parsed, checked request and the
/// caller's config: the cache key is never computed from a body that has not passed its limits.
pub async fn front<I, C, D>(
    incoming: &I,
    callers: &C,
    (surface, limits, request_id): (Surface, BodyLimits, &str),
    progress: &mut Progress,
    digest: D,
) -> Result<Scoped, ApiError>
where
    I: Incoming,
    C: CallerStore,
    D: FnOnce(&TenantConfig, &crate::api::ChatRequest) -> Option<[u8; 32]>,
{
    let (key, cfg) = identify::identify(identify::presented(incoming), callers).await?;
    progress.tenant = Some(cfg.tenant.clone());
    let (inbound, digest) = read::read(incoming, surface, limits, &cfg, digest).await?;
    progress.requested = Some(inbound.model().to_owned());
    progress.requested_configured = crate::routing::configured_name(&cfg, inbound.model());
    let pending = scope::scope(incoming, &key, &cfg, &inbound, request_id)?;
    Ok(Scoped {
        key,
        cfg,
        inbound,
        pending,
        digest,
    })
}
