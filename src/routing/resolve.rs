//! Spec §1, resolving a name: a catalog model, or an alias applied as pin → filter → order → tie.
//! A name that is neither falls back to loose version matching (`routing::versions`),
//! a provider pin narrows the catalog a request sees (`routing::pin`), and an alias with
//! `prefer_newest_version` orders dated models newest first, ahead of its ranking.
//!
//! A cheapest or balanced price alias orders by effective price (`CatalogModel::effective_price`):
//! the input priced at the tenant's measured cached share of each model, read once when the
//! config is loaded (`resolve_aliases_with`). Until a model has both a cached price and a
//! measured share, that is the list price, and the order is the spec's exactly.

use super::chain::RouteInput;
use super::observed::{NothingObserved, Observed};
use super::pin::{self, Pin};
use super::rank::{rank, Ranked, Ranking};
use super::versions;
use crate::config::alias::RankBy;
use crate::config::tenant::Resolution;
use crate::config::SortedMap;
use crate::config::{Alias, AliasName, CatalogModel, CostTier, ModelId, TenantConfig};
use std::cmp::{Ordering, Reverse};

/// What a name refers to in one tenant's config.
#[derive(Debug, Clone, Copy)]
pub enum Target<'c> {
    Model(&'c CatalogModel),
    Alias(&'c AliasName, &'c Alias),
}

/// Whether `name` is one the tenant configured, exactly as written: a catalog id, an alias, a
/// rule's match, or an `auto` name in its lower-case form (a strategy, or `auto:<rule>` naming a
/// rule). A name reached only through loose version matching or another spelling is the
/// caller's string, of which there is no end; the metrics count it apart (`metrics::counts`).
pub fn configured_name(cfg: &TenantConfig, name: &str) -> bool {
    if let Some(auto) = super::auto::parse(name) {
        return name == name.to_ascii_lowercase()
            && match auto {
                super::auto::AutoName::Strategy(_) => true,
                super::auto::AutoName::Rule(rule) => cfg.rules.named(rule).is_some(),
            };
    }
    cfg.models.contains_key(name)
        || cfg.aliases.contains_key(name)
        || !cfg.rules.for_match(name).is_empty()
}

/// A catalog model of that id, else an alias of that name, else the catalog model it
/// loosely matches: exact ids always win, and an exact name never reaches the version index.
pub fn lookup<'c>(cfg: &'c TenantConfig, name: &str) -> Option<Target<'c>> {
    lookup_pinned(cfg, name, None)
}

/// `lookup` as a request pinned to a provider sees the catalog: only that provider's models (an
/// id of another provider may then reach a dated sibling on the pinned one). Aliases stay.
pub fn lookup_pinned<'c>(
    cfg: &'c TenantConfig,
    name: &str,
    pin: Option<&Pin>,
) -> Option<Target<'c>> {
    if let Some(model) = cfg.models.get(name).filter(|m| pin::admits(pin, m)) {
        return Some(Target::Model(model));
    }
    if let Some((n, a)) = cfg.aliases.get_key_value(name) {
        return Some(Target::Alias(n, a));
    }
    versions::closest(cfg, name, |m| pin::admits(pin, m)).map(Target::Model)
}

/// The model `name` resolves to in this config (resolved once per config, then looked up).
pub fn alias_target<'c>(cfg: &'c TenantConfig, name: &AliasName) -> Option<&'c CatalogModel> {
    resolve_aliases(cfg)
        .get(name)?
        .as_ref()
        .and_then(|id| cfg.models.get(id))
}

/// The model an alias contributes to this request. `rank_by: "price"` is the spec's resolution,
/// once per config; any other `rank_by` reads the measured stats, so it ranks per request.
/// Under a provider pin a price alias keeps its resolution when that is on the provider (the
/// best of all is the best of any part holding it), else resolves among the provider's models.
pub fn alias_model<'c>(
    cfg: &'c TenantConfig,
    name: &AliasName,
    alias: &Alias,
    input: &RouteInput<'_>,
) -> Option<&'c CatalogModel> {
    if alias.rank_by.is_price() {
        let once = alias_target(cfg, name);
        return match input.pin {
            None => once,
            Some(p) => once.filter(|m| pin::admits(Some(p), m)).or_else(|| {
                let shares = cached_shares(cfg);
                let keep = |m: &CatalogModel| pin::admits(Some(p), m);
                resolve_within(&cfg.models, alias, keep, shares, |m| {
                    platform_rank(cfg, alias, m)
                })
            }),
        };
    }
    ranked_alias(cfg, alias, input).into_iter().next()
}

/// A ranked alias's models in order. Rule 1 holds (a pin that exists wins outright);
/// rule 2 filters; the provider preference orders before the alias's axis (`routing::rank`).
pub fn ranked_alias<'c>(
    cfg: &'c TenantConfig,
    alias: &Alias,
    input: &RouteInput<'_>,
) -> Vec<&'c CatalogModel> {
    let on_pin = |m: &&CatalogModel| pin::admits(input.pin, m);
    if let Some(pinned) = alias.pin.as_ref().and_then(|p| cfg.models.get(p)) {
        if on_pin(&pinned) {
            return vec![pinned];
        }
    }
    let (set, how) = alias_ranking(cfg, alias, input);
    rank(set, &how, input.now_ms, input.draw)
}

/// What a ranked alias ranks and how (its pin aside): the models satisfying it, each with its
/// provider-preference tier and what was measured of it (`explain` scores the same set).
pub fn alias_ranking<'c>(
    cfg: &'c TenantConfig,
    alias: &Alias,
    input: &RouteInput<'_>,
) -> (Vec<Ranked<'c>>, Ranking) {
    let set = cfg
        .models
        .values()
        .filter(|m| pin::admits(input.pin, m))
        .filter(|m| satisfies(m, alias))
        .map(|m| Ranked {
            model: m,
            tier: preference_rank(m, alias),
            platform: platform_rank(cfg, alias, m),
            health: input.observed.health(&m.provider, &m.id),
        })
        .collect();
    let how = Ranking {
        rank_by: alias.rank_by,
        price_descending: alias.cost_tier == CostTier::Best,
        weights: alias.weights.unwrap_or_default(),
        exploration_share: cfg.settings.exploration_share,
        prefer_newest: alias.prefer_newest_version,
        headroom_threshold: (alias.rank_by == RankBy::Score)
            .then_some(cfg.settings.headroom_threshold),
    };
    (set, how)
}

/// The model an alias would resolve to were `top` gone: its refusal fallback when it
/// is requested on its own, one candidate by the spec. Its pin, if `top`, falls through to its
/// constraints, as a retired pin does.
pub fn alias_runner_up<'c>(
    cfg: &'c TenantConfig,
    alias: &Alias,
    input: &RouteInput<'_>,
    top: &ModelId,
) -> Option<&'c CatalogModel> {
    let keep = |m: &CatalogModel| m.id != *top && pin::admits(input.pin, m);
    if !alias.rank_by.is_price() {
        if let Some(m) = ranked_alias(cfg, alias, input)
            .into_iter()
            .find(|m| m.id != *top)
        {
            return Some(m);
        }
    }
    let platform = |m: &CatalogModel| platform_rank(cfg, alias, m);
    resolve_within(&cfg.models, alias, keep, cached_shares(cfg), platform)
}

/// Every alias of `cfg` resolved, with nothing measured if the config was not resolved at load.
pub fn resolve_aliases(cfg: &TenantConfig) -> &SortedMap<AliasName, Option<ModelId>> {
    &resolve_aliases_with(cfg, &NothingObserved).aliases
}

/// Resolves every alias of `cfg` now (a freshly loaded config, before any request needs it),
/// pricing each model with a cached price at the share `observed` measured of it. The config
/// keeps the result: the order moves when the config is loaded again, never per request.
pub fn resolve_aliases_with<'c>(cfg: &'c TenantConfig, observed: &dyn Observed) -> &'c Resolution {
    cfg.resolved.get_or_init(|| {
        let cached_shares: SortedMap<ModelId, f64> = cfg
            .models
            .values()
            .filter(|m| m.cached_input_price_per_mtok.is_some())
            .filter_map(|m| {
                let share = observed.health(&m.provider, &m.id)?.cached_share?;
                Some((m.id.clone(), share))
            })
            .collect();
        let aliases = cfg
            .aliases
            .iter()
            .map(|(n, a)| {
                let platform = |m: &CatalogModel| platform_rank(cfg, a, m);
                let model = resolve_within(&cfg.models, a, |_| true, &cached_shares, platform);
                (n.clone(), model.map(|m| m.id.clone()))
            })
            .collect();
        Resolution {
            aliases,
            cached_shares,
        }
    })
}

/// The cached shares the config's price order read (none if nothing was measured at load).
pub fn cached_shares(cfg: &TenantConfig) -> &SortedMap<ModelId, f64> {
    &resolve_aliases_with(cfg, &NothingObserved).cached_shares
}

/// The single model an alias resolves to by list prices, or `None` when nothing satisfies it.
pub fn resolve_alias<'c>(
    catalog: &'c SortedMap<ModelId, CatalogModel>,
    alias: &Alias,
) -> Option<&'c CatalogModel> {
    resolve_within(catalog, alias, |_| true, &SortedMap::new(), |_| 0)
}

/// `resolve_alias` over the models `keep` admits, as if the catalog held only them (a provider
/// pin: an alias pin outside them falls through like a retired one), each model's input priced
/// at its share in `shares` (absent: the list price).
fn resolve_within<'c>(
    catalog: &'c SortedMap<ModelId, CatalogModel>,
    alias: &Alias,
    keep: impl Fn(&CatalogModel) -> bool,
    shares: &SortedMap<ModelId, f64>,
    platform: impl Fn(&CatalogModel) -> usize,
) -> Option<&'c CatalogModel> {
    // Rule 1: a pin that exists wins outright; a retired pin falls through to the constraints.
    if let Some(pinned) = alias.pin.as_ref().and_then(|p| catalog.get(p)) {
        if keep(pinned) {
            return Some(pinned);
        }
    }
    // One pass: each model's sort key is computed once, not once per comparison.
    catalog
        .values()
        .filter(|m| keep(m) && satisfies(m, alias))
        .map(|m| {
            let rank = (newest_rank(m, alias), preference_rank(m, alias));
            (rank, (order_price(m, alias, shares), platform(m), m))
        })
        .min_by(|(ra, a), (rb, b)| ra.cmp(rb).then_with(|| order_within_rank(*a, *b, alias)))
        .map(|(_, (_, _, m))| m)
}

/// `prefer_newest_version`: dated models newest first, ahead of the
/// alias's order; undated ones after them. Without the field every model ranks alike here.
fn newest_rank(model: &CatalogModel, alias: &Alias) -> Reverse<Option<versions::VersionDate>> {
    if alias.prefer_newest_version {
        versions::newest_first(model.id.as_str())
    } else {
        Reverse(None)
    }
}

/// Rule 2: every required capability and the minimum context window.
pub fn satisfies(model: &CatalogModel, alias: &Alias) -> bool {
    alias
        .min_context_window
        .is_none_or(|min| model.context_window >= min)
        && alias.capabilities.iter().all(|c| model.has_capability(c))
}

/// Providers not named in the preference sort after every named one, without being excluded.
fn preference_rank(model: &CatalogModel, alias: &Alias) -> usize {
    alias
        .provider_preference
        .iter()
        .position(|p| *p == model.provider)
        .unwrap_or(usize::MAX)
}

/// The price a model orders by in `alias`: the effective price for a cost order (`cheapest`,
/// `balanced`); the list price for `best`, where price stands for quality, which a cache read
/// does not change.
fn order_price(m: &CatalogModel, alias: &Alias, shares: &SortedMap<ModelId, f64>) -> f64 {
    match alias.cost_tier {
        CostTier::Cheapest | CostTier::Balanced => m.effective_price(shares.get(&m.id).copied()),
        CostTier::Best => m.price(),
    }
}

/// Rules 3 and 4 within one preference rank: price (descending only for `best`), then the
/// alias's `prefer_platforms` (every model alike without it), then model id.
fn order_within_rank(
    (pa, la, a): (f64, usize, &CatalogModel),
    (pb, lb, b): (f64, usize, &CatalogModel),
    alias: &Alias,
) -> Ordering {
    let by_price = pa.total_cmp(&pb);
    let by_price = match alias.cost_tier {
        CostTier::Cheapest | CostTier::Balanced => by_price,
        CostTier::Best => by_price.reverse(),
    };
    by_price.then(la.cmp(&lb)).then_with(|| a.id.cmp(&b.id))
}

/// Where `model` sorts by the alias's `prefer_platforms`: its provider's platform's place in it,
/// unlisted platforms last. Every model alike without the field.
pub fn platform_rank(cfg: &TenantConfig, alias: &Alias, model: &CatalogModel) -> usize {
    let Some(order) = alias.prefer_platforms.as_ref() else {
        return 0;
    };
    let provider = cfg.providers.get(&model.provider);
    provider.map_or(usize::MAX, |p| order.rank(p.platform()))
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "resolve_cached_tests.rs"]
mod cached_tests;
