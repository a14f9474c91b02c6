//! Spec §2, building the chain: one candidate per position, dead positions dropped, no model twice.

use super::facts::RequestFacts;
use super::observed::{NothingObserved, Observed};
use super::pin::{self, Pin};
use super::resolve::{alias_model, lookup, lookup_pinned, Target};
use super::settings_owner::SettingsOwner;
use super::{affinity, refusal, spread};
use crate::config::{
    Alias, CatalogModel, Chain, ChainEntry, ModelId, OnRefusal, Provider, ProviderName, RouteName,
    TenantConfig,
};

/// One model to try, with the provider that serves it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'c> {
    pub model: &'c CatalogModel,
    pub provider: &'c Provider,
}

pub use super::chain_error::ChainError;

/// What a request brings to its chain besides the name: what was measured, the time,
/// its random draw, the caller's scope and the conversation's remembered model.
pub struct RouteInput<'a> {
    pub observed: &'a dyn Observed,
    pub now_ms: u64,
    /// 64 random bits of this request: the exploration and spread draws read them, so a chain is
    /// deterministic for a given snapshot and draw.
    pub draw: u64,
    /// Whether the caller's key may use a model; the `auto` names rank only those.
    pub may_use: &'a dyn Fn(&ModelId) -> bool,
    /// The model that last served this conversation's stable prefix under the requested name,
    /// and when (epoch ms), if this isolate remembers one (`cache_affinity_s`).
    pub remembered: Option<(&'a ModelId, u64)>,
    /// What the request is, for rules' `when` conditions; `None` reads as no facts.
    pub facts: Option<&'a RequestFacts>,
    /// `X-CogniGate-Pin-Provider` and `X-CogniGate-Pin-Platform`: only the candidates of the
    /// providers they admit are kept.
    pub pin: Option<&'a Pin>,
}

impl RouteInput<'_> {
    /// The spec's resolution: nothing measured, nothing remembered, every model usable.
    pub fn unmeasured() -> RouteInput<'static> {
        RouteInput {
            observed: &NothingObserved,
            now_ms: 0,
            draw: 0,
            may_use: &|_| true,
            remembered: None,
            facts: None,
            pin: None,
        }
    }
}

/// Whether the name's prompt-cache affinity chose the remembered model (`X-CogniGate-Cache-Affinity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AffinityUse {
    Hit,
    Miss,
}

impl AffinityUse {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Miss => "miss",
        }
    }
}

/// A request's chain, whether cache affinity applied to it (`None`: the name has none), and
/// what a safety refusal does (the matched rule's `on_refusal`, else the requested alias's).
#[derive(Debug)]
pub struct Route<'c> {
    pub candidates: Vec<Candidate<'c>>,
    pub affinity: Option<AffinityUse>,
    pub on_refusal: OnRefusal,
    /// Asked only after a refusal, once the chain's own later positions are spent (an alias
    /// requested on its own: its runner-up; `routing::refusal`).
    pub refusal_only: Option<Candidate<'c>>,
    /// The tenant's restrictions the request matched (indices into `settings.restrictions`):
    /// every candidate lies inside all of them (`routing::restriction`).
    pub restrictions: Vec<usize>,
    /// Why each of the chain's last positions was added after the model the name resolved to
    /// (`routing::fallback_link`), in order; empty when none was.
    pub appended: Vec<super::fallback_link::Via>,
    /// The TTL prompt-cache marks are injected with (`routing::prompt_cache`; `None`: none).
    pub prompt_cache: Option<crate::config::CacheTtl>,
}

pub fn build_chain<'c>(
    cfg: &'c TenantConfig,
    requested: &str,
    input: &RouteInput<'_>,
) -> Result<Route<'c>, ChainError> {
    let applied = super::restriction::applied(cfg, input.facts);
    // A restriction narrows the request as a pin does, wherever its candidates come from.
    let narrowed = super::restriction::narrow(cfg, input.pin, &applied)?;
    let input = &RouteInput {
        pin: narrowed.as_ref().or(input.pin),
        ..*input
    };
    let (mut route, ruled) = match super::auto::parse(requested) {
        Some(auto) => (
            super::auto::route(cfg, requested, auto, input)?,
            matches!(auto, super::auto::AutoName::Rule(_)),
        ),
        // The first of the name's rules whose `when` holds; none, as if no rule existed.
        None => {
            let rule = super::condition::matched_rule(cfg, requested, input.facts);
            (
                walk(cfg, requested, rule.map(|r| &r.chain), input)?,
                rule.is_some(),
            )
        }
    };
    // A rule's chain is used as written; any other name follows its model's links.
    if !ruled {
        let scoped = super::auto::parse(requested).is_some();
        super::fallback_link::follow(cfg, &mut route, input, scoped);
    }
    route.restrictions = applied;
    Ok(route)
}

/// The chain of `requested` given the rule that applies (`None`: its model or alias alone).
pub(super) fn walk<'c>(
    cfg: &'c TenantConfig,
    requested: &str,
    rule: Option<&'c Chain>,
    input: &RouteInput<'_>,
) -> Result<Route<'c>, ChainError> {
    let single = [requested];
    let entries: Box<dyn Iterator<Item = Entry<'_>>> = match rule {
        Some(chain) => Box::new(chain.entries().iter().map(Entry::of)),
        None if lookup(cfg, requested).is_some() => Box::new(single.into_iter().map(Entry::Name)),
        None => return Err(ChainError::UnknownName(requested.to_owned())),
    };
    let preferred = affinity::preferred(cfg, requested, rule, input);
    let mut candidates: Vec<Candidate<'c>> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    for (position, entry) in entries.enumerate() {
        let found = match entry {
            Entry::Name(name) => candidate_for(cfg, name, input),
            Entry::Spread(members) => {
                let draw = spread::position_draw(input.draw, position);
                let resolve = |m: &str| candidate_for(cfg, m, input);
                let platforms = rule.and_then(|c| c.prefer_platforms());
                let by = spread::Preference {
                    preferred,
                    platforms,
                };
                spread::pick(members, resolve, input.observed, draw, by)
            }
        };
        match found {
            Ok(c) if candidates.iter().any(|seen| seen.model.id == c.model.id) => {}
            Ok(c) => candidates.push(c),
            Err(why) => reasons.push(why),
        }
    }
    if candidates.is_empty() {
        let reasons = match input.pin {
            Some(p) => pin::no_candidates(p, &reasons),
            None => reasons.join("; "),
        };
        return Err(ChainError::NoCandidates {
            name: requested.to_owned(),
            reasons,
        });
    }
    let resolve = |m: &str| candidate_for(cfg, m, input);
    let affinity = affinity::choose(cfg, requested, rule, input, &mut candidates, resolve);
    let refusal_only = refusal::refusal_only(cfg, requested, rule, input, &candidates);
    let owner = SettingsOwner::of(cfg, requested, rule);
    Ok(Route {
        candidates,
        affinity,
        on_refusal: refusal::on_refusal(owner),
        refusal_only,
        restrictions: Vec::new(),
        appended: Vec::new(),
        prompt_cache: super::prompt_cache::injection(owner),
    })
}

/// A chain position as `build_chain` walks it.
enum Entry<'e> {
    Name(&'e str),
    Spread(&'e [crate::config::SpreadMember]),
}

impl<'e> Entry<'e> {
    fn of(e: &'e ChainEntry) -> Self {
        match e {
            ChainEntry::Name(n) => Self::Name(n.as_str()),
            ChainEntry::Spread { spread } => Self::Spread(spread),
        }
    }
}

/// Why each entry (each spread member) resolves to nothing today; a rule is still accepted with
/// these as warnings. `has_provider` answers for provider names, so the admin side can judge a
/// rule from the catalog alone, without opening provider keys.
pub fn dead_entries(
    cfg: &TenantConfig,
    entries: &[ChainEntry],
    has_provider: impl Fn(&ProviderName) -> bool,
) -> Vec<String> {
    // Judged from the catalog alone: a ranked alias is dead only when nothing satisfies it.
    let unmeasured = RouteInput::unmeasured();
    entries
        .iter()
        .flat_map(ChainEntry::names)
        .filter_map(
            |e: &RouteName| match target_model(cfg, e.as_str(), &unmeasured) {
                Err(why) => Some(why),
                Ok(m) if !has_provider(&m.provider) => Some(missing_provider(m)),
                Ok(_) => None,
            },
        )
        .collect()
}

fn missing_provider(model: &CatalogModel) -> String {
    format!(
        "model '{}' names missing provider '{}'",
        model.id, model.provider
    )
}

/// The model a chain position names, directly or through its alias (under a provider pin,
/// among that provider's models: `routing::pin`).
fn target_model<'c>(
    cfg: &'c TenantConfig,
    entry: &str,
    input: &RouteInput<'_>,
) -> Result<&'c CatalogModel, String> {
    match lookup_pinned(cfg, entry, input.pin) {
        Some(Target::Model(m)) => Ok(m),
        Some(Target::Alias(name, alias)) => alias_model(cfg, name, alias, input)
            .ok_or_else(|| format!("alias '{name}' matches no model ({})", describe(alias))),
        None => match (input.pin, lookup(cfg, entry)) {
            (Some(p), Some(Target::Model(m))) => Err(pin::elsewhere(m, p)),
            _ => Err(format!("'{entry}' is neither a model nor an alias")),
        },
    }
}

/// The one candidate a chain position contributes, or why it contributes none.
fn candidate_for<'c>(
    cfg: &'c TenantConfig,
    entry: &str,
    input: &RouteInput<'_>,
) -> Result<Candidate<'c>, String> {
    let model = target_model(cfg, entry, input)?;
    let provider = cfg
        .providers
        .get(&model.provider)
        .ok_or_else(|| missing_provider(model))?;
    Ok(Candidate { model, provider })
}

fn describe(alias: &Alias) -> String {
    let caps: Vec<&str> = alias.capabilities.iter().map(|c| c.as_str()).collect();
    let mut parts = vec![format!("capabilities [{}]", caps.join(", "))];
    if let Some(min) = alias.min_context_window {
        parts.push(format!("min_context_window {min}"));
    }
    if let Some(pin) = &alias.pin {
        parts.push(format!("pin '{pin}' not in catalog"));
    }
    parts.join(", ")
}

#[cfg(test)]
#[path = "chain_tests.rs"]
mod tests;
