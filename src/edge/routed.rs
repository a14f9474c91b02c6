//! A caller request's route (issues 22 and 23): its chain, built from this isolate's view (live
//! stats, open breakers), the request's facts and pin header, the key's scope and the
//! conversation's remembered model.

use super::affinity_memory::Conversation;
use super::gateway::chain_error;
use super::http::{header, now_ms, random_bytes, CallerRequest};
use super::live_stats::IsolateView;
use super::open_breakers::WithOpenBreakers;
use crate::api::ApiError;
use crate::config::{CallerKey, ModelId, TenantConfig};
use crate::routing::{build_chain, pin, Route, RouteInput};
use crate::surfaces::facts::facts;
use crate::surfaces::Inbound;

/// The route of `inbound`, and its conversation if the requested name has cache affinity
/// (already told whether affinity chose its model).
pub(super) fn route<'c>(
    req: &CallerRequest,
    cfg: &'c TenantConfig,
    key: &CallerKey,
    inbound: &Inbound,
) -> Result<(Route<'c>, Option<Conversation>), ApiError> {
    let now = now_ms();
    let isolate = IsolateView {
        tenant: &cfg.tenant,
        now_ms: now,
    };
    let view = WithOpenBreakers(&isolate);
    // What the tenant's rule conditions read (nothing when none has a `when`).
    let metadata = header(req, "x-cognigate-metadata");
    let facts = facts(inbound, cfg.rules.reads(), metadata.as_deref())?;
    let conversation = Conversation::of(cfg, inbound, facts.as_ref());
    let remembered = conversation.as_ref().and_then(Conversation::remembered);
    let may_use = |m: &ModelId| key.policy.allows(m.as_str());
    let pinned = pin::parse(cfg, header(req, pin::HEADER).as_deref());
    let input = RouteInput {
        observed: &view,
        now_ms: now,
        draw: random_bytes::<8>().map_or(0, u64::from_le_bytes),
        may_use: &may_use,
        remembered: remembered.as_ref().map(|(m, at)| (m, *at)),
        facts: facts.as_ref(),
        pin: pinned.map_err(|e| chain_error(&e))?,
    };
    let route = build_chain(cfg, inbound.model(), &input).map_err(|e| chain_error(&e))?;
    let conversation = conversation.map(|c| c.routed(route.affinity));
    Ok((route, conversation))
}
