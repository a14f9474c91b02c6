//! The providers a caller key can reach through the names it may use. A model reaches its own
//! provider; an alias every model it may resolve to (its pin, else every model that satisfies
//! it, since which one it resolves to moves with the stats); a rule's match or its `auto:` name
//! every name of its chain, aliases included. A key without an allow-list reaches every provider
//! of its tenant. What a scoped key is shown of the providers stops there, as its model list does.

use super::auto::{self, AutoName};
use super::resolve::satisfies;
use crate::config::{KeyPolicy, ProviderName, TenantConfig};
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
    let mut chains: Vec<&crate::config::Chain> = Vec::new();
    for rule in cfg.rules.iter() {
        let by_auto = format!("auto:{}", rule.name.as_str());
        let named = auto::allowed_by(AutoName::Rule(rule.name.as_str()), &by_auto, allows);
        if allows(rule.matches.as_str()) || named {
            chains.push(&rule.chain);
        }
    }
    for chain in chains {
        for entry in chain.entries() {
            names.extend(entry.names().into_iter().map(|n| n.as_str()));
        }
    }
    let mut reached = BTreeSet::new();
    for name in names {
        reached.extend(providers_of(cfg, name));
    }
    reached.into_iter().collect()
}

/// The providers one model id or alias may send to.
fn providers_of<'c>(cfg: &'c TenantConfig, name: &str) -> Vec<&'c ProviderName> {
    if let Some(m) = cfg.models.get(name) {
        return vec![&m.provider];
    }
    let Some(alias) = cfg.aliases.get(name) else {
        return Vec::new();
    };
    if let Some(pinned) = alias.pin.as_ref().and_then(|p| cfg.models.get(p)) {
        return vec![&pinned.provider];
    }
    let models = cfg.models.values().filter(|m| satisfies(m, alias));
    models.map(|m| &m.provider).collect()
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
