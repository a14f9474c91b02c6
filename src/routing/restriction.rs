//! Data restrictions on the request path: the tenant's `restrictions` a request matches, and
//! the providers they leave it (`config::restriction`).
//!
//! - A restriction applies to every request its `when` holds for, whatever name it asks for: a
//!   rule, an alias, `auto` or a bare model id.
//! - Only a provider inside every restriction that applies may serve: the intersection of their
//!   lists. The request is narrowed as a pin narrows it (`routing::pin`), so the chain, a
//!   spread, an `auto` ranking, cache affinity and the refusal fallback all choose among those
//!   providers only.
//! - A pin outside is 403 `restricted`; no candidate inside is 503 `no_candidates` naming the
//!   restriction.
//! - A cached answer serves a restricted request only if it was produced inside (`inside`).

use super::chain::ChainError;
use super::condition::holds;
use super::facts::RequestFacts;
use super::pin::{self, Pin};
use crate::config::{Platform, TenantConfig};

/// The restrictions `facts` match, as indices into `settings.restrictions`. Without facts (no
/// condition reads any) only a restriction whose `$not` holds of nothing applies.
pub fn applied(cfg: &TenantConfig, facts: Option<&RequestFacts>) -> Vec<usize> {
    cfg.settings
        .restrictions
        .iter()
        .enumerate()
        .filter(|(_, r)| r.when.as_ref().is_none_or(|w| holds(w.condition(), facts)))
        .map(|(i, _)| i)
        .collect()
}

/// Whether `provider` on `platform` lies inside every restriction of `applied`.
pub fn inside(cfg: &TenantConfig, applied: &[usize], provider: &str, platform: Platform) -> bool {
    applied.iter().all(|&i| {
        cfg.settings
            .restrictions
            .get(i)
            .is_some_and(|r| r.allows(provider, platform))
    })
}

/// How messages name the restrictions of `applied`.
pub fn describe(cfg: &TenantConfig, applied: &[usize]) -> String {
    let names: Vec<String> = applied
        .iter()
        .filter_map(|&i| cfg.settings.restrictions.get(i).map(|r| r.describe(i)))
        .collect();
    names.join(" and ")
}

/// The request's pin narrowed to the restrictions that apply; `None` when none does (the pin
/// stands as it is). A pin with no provider inside is `Restricted`.
pub fn narrow(
    cfg: &TenantConfig,
    pin: Option<&Pin>,
    applied: &[usize],
) -> Result<Option<Pin>, ChainError> {
    if applied.is_empty() {
        return Ok(None);
    }
    let keep = |name: &crate::config::ProviderName, p: &crate::config::Provider| {
        inside(cfg, applied, name.as_str(), p.platform())
    };
    pin::within(cfg, pin, keep, describe(cfg, applied)).map(Some)
}

#[cfg(test)]
#[path = "restriction_tests.rs"]
mod tests;
