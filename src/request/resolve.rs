//! Names to candidates: the request's facts (what rules' `when` reads), the provider pin, the
//! conversation's remembered model, the route, the refusal policy and the reservation admission
//! will hold. Nothing here waits: every input is the isolate's view at one instant (`now_ms`)
//! and one random draw, so a route is deterministic for a given view and draw.

use super::conversation::Conversation;
use super::Incoming;
use crate::api::ApiError;
use crate::cascade::RefusalPolicy;
use crate::config::{CallerKey, ModelId, TenantConfig};
use crate::governance::{billable_answers, Need, Price};
use crate::routing::affinity::AffinityMemory;
use crate::routing::facts::{Agent, Task};
use crate::routing::{build_chain, pin, Candidate, Observed, Route, RouteInput};
use crate::surfaces::facts::facts;
use crate::surfaces::Inbound;
use crate::usage::estimate::requested_output;

/// What the isolate knows that routing reads, at one instant.
pub struct View<'a, O: Observed> {
    /// Live stats and the breakers this isolate knows open.
    pub observed: &'a O,
    pub memory: &'a AffinityMemory,
    pub now_ms: u64,
    /// 64 random bits of this request (the spread and exploration draws).
    pub draw: u64,
}

/// A request's route and what goes with it.
pub struct Resolved<'c> {
    pub route: Route<'c>,
    /// `Some` when the requested name has cache affinity (already told whether it chose).
    pub conversation: Option<Conversation>,
    pub refusals: RefusalPolicy,
    /// `X-CogniGate-Truncate: oldest`: truncation instead of a `context_window` skip.
    pub truncate_oldest: bool,
    /// The prompt's estimate, read once: the reservation holds it, and an answer without usage
    /// is charged it.
    pub prompt_estimate: u64,
    /// What admission holds for the request (`reservation`).
    pub need: Need,
    /// `params.task` and `params.agent`, when a condition made the facts detect them.
    pub client: (Option<Task>, Option<Agent>),
}

/// The route of `inbound` for `key`; an unknown name or a bad pin is refused here, before any
/// admission, so it costs no rate-limit slot.
pub fn resolve<'c, O: Observed>(
    incoming: &impl Incoming,
    cfg: &'c TenantConfig,
    key: &CallerKey,
    inbound: &Inbound,
    view: &View<'_, O>,
) -> Result<Resolved<'c>, ApiError> {
    let facts = facts(inbound, cfg.reads(), &|h| incoming.header(h))?;
    let conversation = Conversation::of(cfg, inbound, facts.as_ref());
    let client = facts.as_ref().map_or((None, None), |f| (f.task, f.agent));
    let remembered = conversation
        .as_ref()
        .and_then(|c| c.remembered(view.memory));
    let may_use = |m: &ModelId| key.policy.allows(m.as_str());
    let (provider, platform) = (
        incoming.header(pin::HEADER),
        incoming.header(pin::PLATFORM_HEADER),
    );
    let pinned = pin::parse(cfg, provider, platform).map_err(|e| e.api_error())?;
    let input = RouteInput {
        observed: view.observed,
        now_ms: view.now_ms,
        draw: view.draw,
        may_use: &may_use,
        remembered: remembered.as_ref().map(|(m, at)| (m, *at)),
        facts: facts.as_ref(),
        pin: pinned.as_ref(),
    };
    let route = build_chain(cfg, inbound.model(), &input).map_err(|e| e.api_error())?;
    let conversation = conversation.map(|c| c.routed(route.affinity));
    let refusals = refusal_policy(incoming, route.on_refusal);
    let prompt_estimate = inbound.prompt_tokens();
    let chain = (&route.candidates[..], &route.refusal_only);
    let need = reservation(prompt_estimate, inbound, cfg, chain, refusals);
    Ok(Resolved {
        conversation,
        refusals,
        truncate_oldest: header_is(incoming, "x-cognigate-truncate", "oldest"),
        prompt_estimate,
        need,
        route,
        client,
    })
}

/// The requested name's `on_refusal`, unless the request sent `X-CogniGate-Policy-Fallback: off`
/// (any other value is ignored).
pub fn refusal_policy(
    incoming: &impl Incoming,
    on_refusal: crate::config::OnRefusal,
) -> RefusalPolicy {
    let off = header_is(incoming, "x-cognigate-policy-fallback", "off");
    RefusalPolicy::of(on_refusal, off)
}

fn header_is(incoming: &impl Incoming, name: &str, value: &str) -> bool {
    incoming
        .header(name)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
}

/// What admission holds for the request (`Need::of_request`): the prompt estimate (the context
/// guard's) and `max_tokens` for every answer it can be billed (a refusal and its fallback's
/// answer are two), priced at the dearest candidates that may give them, a refusal fallback's
/// runner-up included. Each is priced as it is billed: at its catalog model.
pub fn reservation(
    prompt_estimate: u64,
    inbound: &Inbound,
    cfg: &TenantConfig,
    (chain, refusal_only): (&[Candidate<'_>], &Option<Candidate<'_>>),
    refusals: RefusalPolicy,
) -> Need {
    let prices: Vec<Option<Price>> = chain
        .iter()
        .chain(refusal_only)
        .map(|c| cfg.models.get(&c.model.id).map(Price::of))
        .collect();
    let fallback = refusals == RefusalPolicy::Fallback;
    Need::of_request(
        prompt_estimate,
        requested_output(inbound.chat()),
        &prices,
        billable_answers(fallback, inbound.stream(), prices.len()),
        cfg.models.values().map(Price::of),
    )
}
