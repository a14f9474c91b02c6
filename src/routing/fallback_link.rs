//! Fallback links: a model's own `fallback_model`, followed transitively, and the tenant's
//! `fallback_model` appended after a chain that has no link of its own.
//!
//! They apply to a name no rule matched (a bare model, an alias, a ranked alias, an `auto`
//! strategy): a matched rule's chain is used as written, so a rule never follows links and never
//! gets the tenant fallback. The chain they start from is the model the name resolved to; the
//! first source that yields a target wins: its links, else the tenant fallback, else (an `auto`
//! strategy only) the ranking's runner-ups as before. A name whose models have no link and a
//! tenant without a fallback model keep their chain unchanged.
//!
//! A link that names no live model (deleted, outside the request's pin or restrictions, or on a
//! provider that is gone) ends the chain there: it adds no position, as a dead rule position
//! adds none, and it is never an error. A loop ends the chain at the first model seen twice.

use super::chain::{Candidate, Route, RouteInput};
use super::pin;
use super::resolve::alias_model;
use crate::config::{CatalogModel, ModelId, RouteName, TenantConfig};
use serde::Serialize;

/// The most targets a linked chain holds, the first included: each hop costs the failing model's
/// whole retry cycle, so a long chain would stretch one request across many of them.
pub const MAX_LINKED_TARGETS: usize = 3;

/// Why a position was added after the model the name resolved to (`explain` shows it).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// The `fallback_model` of the position before it.
    FallbackModel,
    /// The tenant's `fallback_model` setting.
    TenantFallback,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FallbackModel => "fallback_model",
            Self::TenantFallback => "tenant_fallback",
        }
    }
}

/// The targets a chain that follows links may hold: three, and no more than the tenant's
/// `max_fallback_depth` (which counts targets, as for rules).
pub fn cap(cfg: &TenantConfig) -> usize {
    let depth = usize::try_from(cfg.settings.max_fallback_depth).unwrap_or(usize::MAX);
    MAX_LINKED_TARGETS.min(depth).max(1)
}

/// Rewrites `route` (the chain of a name no rule matched) to follow the first target's links,
/// else to append the tenant fallback. `route.appended` records why each added position is
/// there; a route neither applies to is left as it was. `scoped`: an `auto` strategy, which
/// serves only models the caller's key may use, so a link or fallback outside them is dead.
pub fn follow<'c>(
    cfg: &'c TenantConfig,
    route: &mut Route<'c>,
    input: &RouteInput<'_>,
    scoped: bool,
) {
    let Some(first) = route.candidates.first().copied() else {
        return;
    };
    // Neither a link nor a tenant fallback: the chain stays as built, at no cost.
    if first.model.fallback_model.is_none() && cfg.settings.fallback_model.is_none() {
        return;
    }
    let cap = cap(cfg);
    let usable = |m: &CatalogModel| !scoped || (input.may_use)(&m.id);
    let linked = links(cfg, first, input, cap, &usable);
    if !linked.is_empty() {
        route.appended = vec![Via::FallbackModel; linked.len()];
        route.candidates = std::iter::once(first).chain(linked).collect();
        return;
    }
    let Some(fallback) = cfg.settings.fallback_model.as_ref() else {
        return;
    };
    let Some(c) = tenant_fallback(cfg, fallback, input).filter(|c| usable(c.model)) else {
        return;
    };
    if c.model.id == first.model.id || cap < 2 {
        return;
    }
    // The tenant fallback stands in for an `auto` strategy's runner-ups; a name that resolved to
    // one model has no other position to keep.
    route.candidates = vec![first, c];
    route.appended = vec![Via::TenantFallback];
}

/// The live targets `first`'s link leads to, in order, until a dead link, a model already in the
/// chain, or the cap (counting `first`).
fn links<'c>(
    cfg: &'c TenantConfig,
    first: Candidate<'c>,
    input: &RouteInput<'_>,
    cap: usize,
    usable: &dyn Fn(&CatalogModel) -> bool,
) -> Vec<Candidate<'c>> {
    let mut seen: Vec<&ModelId> = vec![&first.model.id];
    let mut out = Vec::new();
    let mut at = first.model;
    while seen.len() < cap {
        let Some(next) = at.fallback_model.as_ref() else {
            break;
        };
        if seen.contains(&next) {
            break;
        }
        let found = cfg.models.get(next).filter(|m| usable(m));
        let Some(c) = found.and_then(|m| live(cfg, m, input)) else {
            break;
        };
        seen.push(&c.model.id);
        out.push(c);
        at = c.model;
    }
    out
}

/// The tenant fallback's target: the model of that id, else what the alias of that name resolves
/// to for this request. Exact names only: a deleted model is not replaced by a dated sibling.
/// Its own link is not followed.
pub fn tenant_fallback<'c>(
    cfg: &'c TenantConfig,
    name: &RouteName,
    input: &RouteInput<'_>,
) -> Option<Candidate<'c>> {
    let model = match cfg.aliases.get_key_value(name.as_str()) {
        Some((n, a)) => alias_model(cfg, n, a, input)?,
        None => cfg.models.get(name.as_str())?,
    };
    live(cfg, model, input)
}

/// The model as a candidate when the request may reach it: inside its pin (and so its
/// restrictions) and on a provider that exists.
fn live<'c>(
    cfg: &'c TenantConfig,
    model: &'c CatalogModel,
    input: &RouteInput<'_>,
) -> Option<Candidate<'c>> {
    if !pin::admits(input.pin, model) {
        return None;
    }
    let provider = cfg.providers.get(&model.provider)?;
    Some(Candidate { model, provider })
}

#[cfg(test)]
#[path = "fallback_link_tests.rs"]
mod tests;
