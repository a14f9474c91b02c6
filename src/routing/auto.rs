//! The `auto` names: reserved for every tenant, case-insensitive. A strategy ranks
//! every chat model the caller may use whose provider exists, and serves the top
//! `max_fallback_depth` of them (the runner-up is the first fallback); `auto:<rule>` serves that
//! routing rule's chain; any other `auto:<x>` is refused, never a silent fallback.

use super::chain::{walk, Candidate, ChainError, Route, RouteInput};
use super::rank::{rank, Ranked, Ranking};
use crate::config::alias::{RankBy, Weights};
use crate::config::{Capability, OnRefusal, TenantConfig};

/// How a strategy ranks (five strategies, with their common synonyms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// `auto`, `auto:balanced`: the default score.
    Balanced,
    /// `auto:fast` (`fastest`, `speed`): latency ascending.
    Fast,
    /// `auto:cheap` (`cheapest`, `budget`): price ascending.
    Cheap,
    /// `auto:smart` (`smartest`): price descending, the best tier.
    Smart,
    /// `auto:reliable`: success ratio descending.
    Reliable,
}

impl Strategy {
    /// Every strategy, by its canonical name (what `/v1/models` lists; synonyms are not listed).
    pub const LISTED: [(&'static str, Strategy); 6] = [
        ("auto", Self::Balanced),
        ("auto:balanced", Self::Balanced),
        ("auto:fast", Self::Fast),
        ("auto:cheap", Self::Cheap),
        ("auto:smart", Self::Smart),
        ("auto:reliable", Self::Reliable),
    ];

    fn named(lower: &str) -> Option<Self> {
        Some(match lower {
            "balanced" => Self::Balanced,
            "fast" | "fastest" | "speed" => Self::Fast,
            "cheap" | "cheapest" | "budget" => Self::Cheap,
            "smart" | "smartest" => Self::Smart,
            "reliable" => Self::Reliable,
            _ => return None,
        })
    }

    /// How the strategy ranks, with the tenant's `exploration_share` and `headroom_threshold`.
    pub fn ranking(self, exploration_share: f64, headroom_threshold: f64) -> Ranking {
        let (rank_by, price_descending) = match self {
            Self::Balanced => (RankBy::Score, false),
            Self::Fast => (RankBy::Latency, false),
            Self::Cheap => (RankBy::Price, false),
            Self::Smart => (RankBy::Price, true),
            Self::Reliable => (RankBy::Success, false),
        };
        Ranking {
            rank_by,
            price_descending,
            weights: Weights::default(),
            exploration_share,
            prefer_newest: false,
            headroom_threshold: Some(headroom_threshold),
        }
    }
}

/// What an `auto` name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoName<'a> {
    Strategy(Strategy),
    /// `auto:<x>` naming no strategy: the chain of the routing rule called `x` (by its
    /// name, as written, case-sensitive like every rule name; whatever its `when`), else unknown.
    Rule(&'a str),
}

/// `None` when `name` is not an `auto` name. The `auto` prefix and the strategy names are
/// case-insensitive; a strategy name wins over a rule of the same name.
pub fn parse(name: &str) -> Option<AutoName<'_>> {
    if name.eq_ignore_ascii_case("auto") {
        return Some(AutoName::Strategy(Strategy::Balanced));
    }
    let rest = name
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("auto:"))
        .and_then(|_| name.get(5..))?;
    Some(match Strategy::named(&rest.to_ascii_lowercase()) {
        Some(s) => AutoName::Strategy(s),
        None => AutoName::Rule(rest),
    })
}

/// The chain an `auto` name serves. A strategy whose caller may use none of the tenant's chat
/// models is `NoneAllowed`; with no chat model at all, `NoCandidates`.
pub fn route<'c>(
    cfg: &'c TenantConfig,
    requested: &str,
    name: AutoName<'_>,
    input: &RouteInput<'_>,
) -> Result<Route<'c>, ChainError> {
    let strategy = match name {
        // The rule called `rule`, whatever its `when` (naming it is the choice).
        AutoName::Rule(rule) => match cfg.rules.named(rule) {
            Some(r) => return walk(cfg, r.name.as_str(), Some(&r.chain), input),
            None => return Err(ChainError::UnknownChain(requested.to_owned())),
        },
        AutoName::Strategy(s) => s,
    };
    let servable = servable(cfg, input);
    let usable = usable(&servable, input);
    if usable.is_empty() {
        return Err(if servable.is_empty() {
            let none = "no chat model with an existing provider".to_owned();
            ChainError::NoCandidates {
                name: requested.to_owned(),
                reasons: match input.pin {
                    Some(p) => super::pin::no_candidates(p, &[none]),
                    None => none,
                },
            }
        } else {
            ChainError::NoneAllowed(requested.to_owned())
        });
    }
    let s = &cfg.settings;
    let how = strategy.ranking(s.exploration_share, s.headroom_threshold);
    let depth = usize::try_from(cfg.settings.max_fallback_depth).unwrap_or(usize::MAX);
    let candidates = rank(usable, &how, input.now_ms, input.draw)
        .into_iter()
        .take(depth)
        .filter_map(|model| servable.iter().find(|c| c.model.id == model.id).copied())
        .collect();
    Ok(Route {
        candidates,
        affinity: None,
        on_refusal: OnRefusal::Answer,
        refusal_only: None,
        restrictions: Vec::new(),
        appended: Vec::new(),
        prompt_cache: None,
    })
}

/// Every chat model whose provider exists (under a pin, that provider's).
fn servable<'c>(cfg: &'c TenantConfig, input: &RouteInput<'_>) -> Vec<Candidate<'c>> {
    let chat = Capability::parse("chat").ok();
    cfg.models
        .values()
        .filter(|m| super::pin::admits(input.pin, m))
        .filter(|m| chat.as_ref().is_some_and(|c| m.has_capability(c)))
        .filter_map(|model| {
            let provider = cfg.providers.get(&model.provider)?;
            Some(Candidate { model, provider })
        })
        .collect()
}

fn usable<'c>(servable: &[Candidate<'c>], input: &RouteInput<'_>) -> Vec<Ranked<'c>> {
    servable
        .iter()
        .filter(|c| (input.may_use)(&c.model.id))
        .map(|c| Ranked {
            model: c.model,
            tier: 0,
            platform: 0,
            health: input.observed.health(&c.model.provider, &c.model.id),
        })
        .collect()
}

/// What a strategy ranks: every servable chat model the caller may use (`explain` scores it).
pub fn strategy_set<'c>(cfg: &'c TenantConfig, input: &RouteInput<'_>) -> Vec<Ranked<'c>> {
    usable(&servable(cfg, input), input)
}

/// Whether a caller key's allow-list (`allows`, by name as listed; an unscoped key allows every
/// name) lets it call this `auto` name. A scoped key lists the `auto` names it may use like any
/// other name (it sees and calls only its names): a strategy by any of its listed
/// names (`auto` and `auto:balanced` are one), `auto:<rule>` as itself or by the rule's name.
pub fn allowed_by(name: AutoName<'_>, requested: &str, allows: impl Fn(&str) -> bool) -> bool {
    allows(requested)
        || match name {
            AutoName::Strategy(s) => Strategy::LISTED
                .iter()
                .any(|(listed, t)| *t == s && allows(listed)),
            AutoName::Rule(rule) => allows(rule) || allows(&format!("auto:{rule}")),
        }
}

/// The `auto` names `/v1/models` lists for a caller: the strategies and `auto:<rule>` for each
/// rule (one no strategy shadows) that its key may call (`allowed_by`).
pub fn listed(cfg: &TenantConfig, allows: impl Fn(&str) -> bool) -> Vec<String> {
    let strategies = Strategy::LISTED
        .iter()
        .filter(|(n, s)| allowed_by(AutoName::Strategy(*s), n, &allows))
        .map(|(n, _)| (*n).to_owned());
    let rules = cfg
        .rules
        .iter()
        .map(|r| r.name.as_str())
        .filter(|r| Strategy::named(&r.to_ascii_lowercase()).is_none())
        .map(|r| format!("auto:{r}"))
        .filter(|n| parse(n).is_some_and(|a| allowed_by(a, n, &allows)));
    strategies.chain(rules).collect()
}

#[cfg(test)]
#[path = "auto_tests.rs"]
mod tests;
