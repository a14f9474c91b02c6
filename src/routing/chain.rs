//! Spec §2, building the chain: one candidate per position, dead positions dropped, no model twice.

use super::facts::RequestFacts;
use super::observed::{NothingObserved, Observed};
use super::pin::{self, Pin};
use super::resolve::{alias_model, lookup, lookup_pinned, Target};
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
    let mut route = match super::auto::parse(requested) {
        Some(auto) => super::auto::route(cfg, requested, auto, input)?,
        // The first of the name's rules whose `when` holds; none, as if no rule existed.
        None => {
            let rule = super::condition::matched_rule(cfg, requested, input.facts);
            walk(cfg, requested, rule.map(|r| &r.chain), input)?
        }
    };
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
                spread::pick(members, resolve, input.observed, draw, preferred)
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
    Ok(Route {
        candidates,
        affinity,
        on_refusal: refusal::on_refusal(cfg, requested, rule),
        refusal_only,
        restrictions: Vec::new(),
        prompt_cache: super::prompt_cache::injection(cfg, requested, rule),
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
mod tests {
    use super::*;
    use crate::config::admin_body::{parse_body, AliasBody, ModelBody};
    use crate::config::{AliasName, ModelId, RouteName};

    use crate::routing::test_config::cfg;

    fn add_model(cfg: &mut TenantConfig, id: &str, provider: &str, price: f64, ctx: u32) {
        let json = format!(
            r#"{{"provider":"{provider}","context_window":{ctx},"input_price_per_mtok":{price}}}"#
        );
        let body: ModelBody = parse_body(json.as_bytes()).unwrap();
        let id = ModelId::parse(id).unwrap();
        cfg.models.insert(id.clone(), body.validate(id).unwrap());
    }

    fn add_alias(cfg: &mut TenantConfig, name: &str, json: &str) {
        let body: AliasBody = parse_body(json.as_bytes()).unwrap();
        cfg.aliases
            .insert(AliasName::parse(name).unwrap(), body.validate().unwrap());
    }

    fn add_rule(cfg: &mut TenantConfig, matches: &str, chain: &[&str]) {
        let entries = chain
            .iter()
            .map(|e| crate::config::ChainEntry::Name(RouteName::parse(e).unwrap()))
            .collect();
        cfg.rules.insert(
            RouteName::parse(matches).unwrap(),
            Chain::new(entries, 5).unwrap(),
        );
    }

    fn ids(r: Result<Route<'_>, ChainError>) -> Vec<String> {
        r.unwrap()
            .candidates
            .iter()
            .map(|c| c.model.id.to_string())
            .collect()
    }

    fn build_chain<'c>(cfg: &'c TenantConfig, requested: &str) -> Result<Route<'c>, ChainError> {
        super::build_chain(cfg, requested, &RouteInput::unmeasured())
    }

    #[test]
    fn with_no_rule_the_chain_is_the_requested_name() {
        let mut c = cfg();
        add_model(&mut c, "gpt-4o", "openai", 5.0, 128_000);
        assert_eq!(ids(build_chain(&c, "gpt-4o")), ["gpt-4o"]);
    }

    #[test]
    fn rule_chain_is_tried_left_to_right() {
        let mut c = cfg();
        add_model(&mut c, "gpt-4o", "openai", 5.0, 128_000);
        add_model(&mut c, "llama-3.3-70b", "together", 1.0, 128_000);
        add_rule(&mut c, "best", &["llama-3.3-70b", "gpt-4o"]);
        assert_eq!(ids(build_chain(&c, "best")), ["llama-3.3-70b", "gpt-4o"]);
    }

    #[test]
    fn alias_in_a_chain_yields_one_candidate_not_all_of_its_matches() {
        let mut c = cfg();
        for (id, price) in [("a", 1.0), ("b", 2.0), ("c", 3.0)] {
            add_model(&mut c, id, "openai", price, 8000);
        }
        add_alias(
            &mut c,
            "fast",
            r#"{"capabilities":["chat"],"cost_tier":"cheapest"}"#,
        );
        add_rule(&mut c, "x", &["fast", "c"]);
        assert_eq!(ids(build_chain(&c, "x")), ["a", "c"]);
    }

    #[test]
    fn position_that_resolves_to_nothing_is_dropped() {
        let mut c = cfg();
        add_model(&mut c, "small", "openai", 1.0, 8000);
        add_alias(
            &mut c,
            "long",
            r#"{"capabilities":["chat"],"min_context_window":128000}"#,
        );
        add_rule(&mut c, "x", &["retired-model", "long", "small"]);
        assert_eq!(ids(build_chain(&c, "x")), ["small"]);
    }

    #[test]
    fn model_already_in_the_chain_is_not_tried_twice() {
        let mut c = cfg();
        add_model(&mut c, "a", "openai", 1.0, 8000);
        add_model(&mut c, "b", "openai", 2.0, 8000);
        add_alias(&mut c, "fast", r#"{"cost_tier":"cheapest"}"#);
        add_rule(&mut c, "x", &["a", "fast", "b", "a"]);
        assert_eq!(ids(build_chain(&c, "x")), ["a", "b"]);
    }

    #[test]
    fn rule_wins_over_a_model_of_the_same_name() {
        let mut c = cfg();
        add_model(&mut c, "a", "openai", 1.0, 8000);
        add_model(&mut c, "b", "openai", 1.0, 8000);
        add_rule(&mut c, "a", &["b", "a"]);
        assert_eq!(ids(build_chain(&c, "a")), ["b", "a"]);
    }

    #[test]
    fn unknown_name_is_model_not_found() {
        let c = cfg();
        assert_eq!(
            build_chain(&c, "nope").err(),
            Some(ChainError::UnknownName("nope".into()))
        );
    }

    #[test]
    fn known_name_with_no_candidate_names_what_could_not_be_satisfied() {
        let mut c = cfg();
        add_model(&mut c, "small", "openai", 1.0, 8000);
        add_alias(
            &mut c,
            "long",
            r#"{"capabilities":["chat"],"min_context_window":128000}"#,
        );
        let err = build_chain(&c, "long").err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("No routing candidate is available for 'long': alias 'long' matches no model (capabilities [chat], min_context_window 128000).")
        );
    }

    #[test]
    fn rule_matching_a_virtual_name_is_known() {
        let mut c = cfg();
        add_model(&mut c, "a", "openai", 1.0, 8000);
        add_rule(&mut c, "my-app", &["gone", "a"]);
        assert_eq!(ids(build_chain(&c, "my-app")), ["a"]);
    }
}
