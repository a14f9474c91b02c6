//! Prompt-cache affinity: a conversation keeps going to the model that
//! served its stable prefix last, so that model's prompt cache is hit, for `cache_affinity_s`
//! after that serve, while the model is a healthy candidate.
//!
//! The memory is per isolate and bounded: `CAPACITY` conversations in all, shared fairly between
//! tenants: when full, the least recently served conversation of the tenant holding the most is
//! evicted, so one tenant cannot push out another's. It holds hashes of prefixes, never prompt
//! text. Time is passed in.

use super::chain::{AffinityUse, Candidate, RouteInput};
use super::condition::matched_rule;
use super::facts::RequestFacts;
use super::resolve::{lookup, satisfies, Target};
use super::settings_owner::SettingsOwner;
use super::spread::breaker_open;
use crate::config::tenant_table::TenantTable;
use crate::config::{Chain, ModelId, TenantConfig};

/// Conversations one isolate remembers (a few hundred bytes each with their names: about 1 MB
/// of wasm memory when full).
pub const CAPACITY: usize = 4_096;

/// The requested name's `cache_affinity_s`: the rule's if a rule matches this request (the
/// rule its facts select), else the alias's. `None` (a plain model, or a name without the
/// field): the name has no affinity.
pub fn window_s(cfg: &TenantConfig, requested: &str, facts: Option<&RequestFacts>) -> Option<u32> {
    let rule = matched_rule(cfg, requested, facts).map(|r| &r.chain);
    rule_window_s(cfg, requested, rule)
}

/// `window_s` once the request's rule (`None`: no rule matched) is known.
fn rule_window_s(cfg: &TenantConfig, requested: &str, rule: Option<&Chain>) -> Option<u32> {
    let owner = SettingsOwner::of(cfg, requested, rule);
    owner
        .read(Chain::cache_affinity_s, |a| a.cache_affinity_s)
        .flatten()
}

/// The remembered model, if the name has affinity and the last serve is within its window.
pub fn preferred<'a>(
    cfg: &TenantConfig,
    requested: &str,
    rule: Option<&Chain>,
    input: &RouteInput<'a>,
) -> Option<&'a ModelId> {
    let window_ms = u64::from(rule_window_s(cfg, requested, rule)?) * 1_000;
    let (model, at) = input.remembered?;
    (input.now_ms.saturating_sub(at) < window_ms).then_some(model)
}

/// Applies affinity to a built chain: the remembered model, if it is a healthy candidate (a
/// plain entry, or the member a spread drew, which prefers it), goes first; for a requested alias
/// it is the resolution if the alias admits it. `None` when the name has no affinity.
pub fn choose<'c>(
    cfg: &'c TenantConfig,
    requested: &str,
    rule: Option<&Chain>,
    input: &RouteInput<'_>,
    candidates: &mut Vec<Candidate<'c>>,
    resolve: impl Fn(&str) -> Result<Candidate<'c>, String>,
) -> Option<AffinityUse> {
    rule_window_s(cfg, requested, rule)?;
    let Some(model) = preferred(cfg, requested, rule, input) else {
        return Some(AffinityUse::Miss);
    };
    if let Some(i) = candidates.iter().position(|c| c.model.id == *model) {
        if breaker_open(input.observed, &candidates[i]) {
            return Some(AffinityUse::Miss);
        }
        candidates[..=i].rotate_right(1);
        return Some(AffinityUse::Hit);
    }
    let admitted = match (rule, lookup(cfg, requested)) {
        (None, Some(Target::Alias(_, alias))) => alias_admits(cfg, alias, model),
        _ => false,
    };
    // The remembered model itself: under a provider pin its id could resolve to a dated sibling.
    match resolve(model.as_str()) {
        Ok(c) if admitted && c.model.id == *model && !breaker_open(input.observed, &c) => {
            candidates.retain(|o| o.model.id != c.model.id);
            candidates.insert(0, c);
            Some(AffinityUse::Hit)
        }
        _ => Some(AffinityUse::Miss),
    }
}

/// Whether an alias could resolve to `model`: its pin if the pin exists, else any model that
/// satisfies its constraints.
fn alias_admits(cfg: &TenantConfig, alias: &crate::config::Alias, model: &ModelId) -> bool {
    match alias.pin.as_ref().filter(|p| cfg.models.contains_key(*p)) {
        Some(pin) => pin == model,
        None => cfg.models.get(model).is_some_and(|m| satisfies(m, alias)),
    }
}

/// Which conversation, under which requested name, of which tenant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConversationKey {
    pub tenant: String,
    pub requested: String,
    /// `surfaces::prefix_hash` of the system prompt and first user turn.
    pub prefix: u64,
}

/// Which model served each remembered conversation last, and when; at most `capacity` in all,
/// shared fairly between tenants (`config::tenant_table`): one tenant's conversations never push
/// out another's that holds fewer.
#[derive(Debug)]
pub struct AffinityMemory {
    table: TenantTable<ConversationKey, (ModelId, u64)>,
}

impl AffinityMemory {
    pub fn new(capacity: usize) -> Self {
        Self {
            table: TenantTable::new(capacity),
        }
    }

    /// The model that served `key` last and when (epoch ms); the window is the caller's.
    pub fn remembered(&self, key: &ConversationKey) -> Option<(&ModelId, u64)> {
        let (model, at) = self.table.get(&key.tenant, key)?;
        Some((model, *at))
    }

    /// `model` just served `key` at `now_ms`; when full, the least recently served conversation
    /// of the tenant holding the most goes.
    pub fn served(&mut self, key: ConversationKey, model: ModelId, now_ms: u64) {
        let tenant = key.tenant.clone();
        self.table.put(&tenant, key, (model, now_ms));
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

#[cfg(test)]
#[path = "affinity_tests.rs"]
mod tests;
