//! The providers a caller key can reach through the names it may use. A model reaches its own
//! provider; an alias every model it may resolve to (its pin, else every model that satisfies
//! it, since which one it resolves to moves with the stats); a rule's match or its `auto:` name
//! every name of its chain, aliases included. A name no rule holds also reaches where its
//! fallback links lead and the tenant's fallback model. A key without an allow-list reaches every
//! provider of its tenant. What a scoped key is shown of the providers stops there, as its model
//! list does.

use super::auto::{self, AutoName};
use super::fallback_link::MAX_LINKED_TARGETS;
use super::resolve::satisfies;
use crate::config::{CatalogModel, KeyPolicy, ProviderName, TenantConfig};
use std::collections::BTreeSet;

/// The tenant's providers `policy` reaches, in name order.
pub fn providers_reached<'c>(cfg: &'c TenantConfig, policy: &KeyPolicy) -> Vec<&'c ProviderName> {
    if policy.models.is_none() {
        return cfg.providers.keys().collect();
    }
    let allows = |n: &str| policy.allows(n);
    let mut names: Vec<&str> = Vec::new();
    let allowed = cfg.models.keys().map(|m| m.as_str());
    names.extend(allowed.chain(cfg.aliases.keys().map(|a| a.as_str())));
    names.retain(|n| allows(n));
    // The tenant fallback serves names no rule holds; its own link is not followed.
    let fallback = cfg
        .settings
        .fallback_model
        .as_ref()
        .filter(|_| !names.is_empty());
    let mut chains: Vec<&crate::config::Chain> = Vec::new();
    for rule in cfg.rules.iter() {
        let by_auto = format!("auto:{}", rule.name.as_str());
        let named = auto::allowed_by(AutoName::Rule(rule.name.as_str()), &by_auto, allows);
        if allows(rule.matches.as_str()) || named {
            chains.push(&rule.chain);
        }
    }
    let linked = names.len();
    names.extend(fallback.map(|f| f.as_str()));
    for chain in chains {
        for entry in chain.entries() {
            names.extend(entry.names().into_iter().map(|n| n.as_str()));
        }
    }
    let mut reached = BTreeSet::new();
    for (i, name) in names.into_iter().enumerate() {
        for model in models_of(cfg, name) {
            reached.insert(&model.provider);
            // A rule's chain is used as written: links are followed outside rules only.
            if i < linked {
                reached.extend(links_of(cfg, model).map(|m| &m.provider));
            }
        }
    }
    reached.into_iter().collect()
}

/// Where `model`'s links lead, as far as a chain may follow them.
fn links_of<'c>(
    cfg: &'c TenantConfig,
    model: &'c CatalogModel,
) -> impl Iterator<Item = &'c CatalogModel> {
    let mut at = model.fallback_model.as_ref();
    let mut hops = 1;
    std::iter::from_fn(move || {
        if hops >= MAX_LINKED_TARGETS {
            return None;
        }
        let next = cfg.models.get(at?)?;
        hops += 1;
        at = next.fallback_model.as_ref();
        Some(next)
    })
}

/// The models one model id or alias may send to.
fn models_of<'c>(cfg: &'c TenantConfig, name: &str) -> Vec<&'c CatalogModel> {
    if let Some(m) = cfg.models.get(name) {
        return vec![m];
    }
    let Some(alias) = cfg.aliases.get(name) else {
        return Vec::new();
    };
    if let Some(pinned) = alias.pin.as_ref().and_then(|p| cfg.models.get(p)) {
        return vec![pinned];
    }
    cfg.models
        .values()
        .filter(|m| satisfies(m, alias))
        .collect()
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
