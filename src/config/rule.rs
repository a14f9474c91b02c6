//! A routing rule's chain: what to try, left to right, for one requested name.

use super::chain_entry::ChainEntry;
use super::condition::When;
use super::names::RouteName;
use super::on_refusal::OnRefusal;
use super::platform_order::PlatformOrder;
use super::prompt_cache::PromptCache;
use super::ConfigError;
use serde::{Deserialize, Serialize};

/// The most routing rules one tenant may have: each request naming a match tries its
/// rules in order, so the bound keeps that walk short.
pub const MAX_RULES: usize = 100;

/// A routing rule: for a request naming `matches`, tried in `priority` order (lower
/// first), then by `name`; the first whose `when` holds, or that has none, gives the chain.
/// `name` is unique per tenant and defaults to `matches`, so a rule written before has its match
/// as its name, priority 0 and no `when`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub name: RouteName,
    pub matches: RouteName,
    pub priority: i32,
    pub when: Option<When>,
    pub chain: Chain,
}

impl Rule {
    /// A rule as written before rules had names: named after its match, priority 0, no `when`.
    pub fn unconditional(matches: RouteName, chain: Chain) -> Self {
        Self {
            name: matches.clone(),
            matches,
            priority: 0,
            when: None,
            chain,
        }
    }

    /// The order rules sharing a match are tried in.
    pub fn order_key(&self) -> (i32, &str) {
        (self.priority, self.name.as_str())
    }
}

/// The longest `max_fallback_depth` a tenant may set: no stored chain is longer.
pub const MAX_DEPTH_LIMIT: u32 = 20;

/// The longest `cache_affinity_s` (rules and aliases): a day. Providers keep a prompt cache for
/// minutes to an hour; past a day a remembered model is a preference, not a cache.
pub const MAX_CACHE_AFFINITY_S: u32 = 86_400;

/// `cache_affinity_s` as written: absent is off; present, 1 to `MAX_CACHE_AFFINITY_S`.
pub fn check_cache_affinity(field: &str, secs: Option<u32>) -> Result<Option<u32>, ConfigError> {
    match secs {
        Some(s) if !(1..=MAX_CACHE_AFFINITY_S).contains(&s) => Err(ConfigError::invalid(
            field,
            format!("must be 1 to {MAX_CACHE_AFFINITY_S} seconds"),
        )),
        s => Ok(s),
    }
}

/// Non-empty and no longer than the tenant's `max_fallback_depth` when it was written; each
/// spread valid (`ChainEntry::check`). A chain read back from D1 is checked again (non-empty, at
/// most `MAX_DEPTH_LIMIT`, spreads valid), so a hand-edited or damaged row cannot bypass
/// `Chain::new`. Its JSON is the entries alone (the `routing_rules.chain` column, where rows of
/// plain names still read); the rule's `cache_affinity_s` is stored beside it.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<ChainEntry>", into = "Vec<ChainEntry>")]
pub struct Chain {
    entries: Vec<ChainEntry>,
    cache_affinity_s: Option<u32>,
    /// The response cache's TTL for this rule (stored beside the chain).
    cache_ttl_s: Option<u32>,
    /// What a safety refusal of this rule's answer does (stored beside the chain).
    on_refusal: OnRefusal,
    /// Prompt-cache breakpoint injection for this rule (stored beside the chain).
    prompt_cache: Option<PromptCache>,
    /// The platform order a spread position draws by (stored beside the chain).
    prefer_platforms: Option<PlatformOrder>,
}

impl TryFrom<Vec<ChainEntry>> for Chain {
    type Error = ConfigError;
    fn try_from(entries: Vec<ChainEntry>) -> Result<Self, ConfigError> {
        Self::new(entries, MAX_DEPTH_LIMIT)
    }
}

impl From<Chain> for Vec<ChainEntry> {
    fn from(c: Chain) -> Self {
        c.entries
    }
}

impl Chain {
    /// Refused when the rule is written, never truncated when it is used.
    pub fn new(entries: Vec<ChainEntry>, max_depth: u32) -> Result<Self, ConfigError> {
        if entries.is_empty() {
            return Err(ConfigError::invalid(
                "chain",
                "must list at least one model or alias",
            ));
        }
        if entries.len() > max_depth as usize {
            return Err(ConfigError::ChainTooLong {
                len: entries.len(),
                max: max_depth,
            });
        }
        for (at, e) in entries.iter().enumerate() {
            e.check(at)?;
        }
        Ok(Self {
            entries,
            cache_affinity_s: None,
            cache_ttl_s: None,
            on_refusal: OnRefusal::Answer,
            prompt_cache: None,
            prefer_platforms: None,
        })
    }

    /// The rule's prompt-cache affinity (seconds; checked by `check_cache_affinity`).
    pub fn with_cache_affinity(self, cache_affinity_s: Option<u32>) -> Self {
        Self {
            cache_affinity_s,
            ..self
        }
    }

    pub fn cache_affinity_s(&self) -> Option<u32> {
        self.cache_affinity_s
    }

    /// The rule's response-cache TTL (seconds; checked by `check_cache_ttl`).
    pub fn with_cache_ttl(self, cache_ttl_s: Option<u32>) -> Self {
        Self {
            cache_ttl_s,
            ..self
        }
    }

    pub fn cache_ttl_s(&self) -> Option<u32> {
        self.cache_ttl_s
    }

    pub fn with_on_refusal(self, on_refusal: OnRefusal) -> Self {
        Self { on_refusal, ..self }
    }

    pub fn on_refusal(&self) -> OnRefusal {
        self.on_refusal
    }

    pub fn with_prompt_cache(self, prompt_cache: Option<PromptCache>) -> Self {
        Self {
            prompt_cache,
            ..self
        }
    }

    pub fn prompt_cache(&self) -> Option<PromptCache> {
        self.prompt_cache
    }

    pub fn with_prefer_platforms(self, prefer_platforms: Option<PlatformOrder>) -> Self {
        Self {
            prefer_platforms,
            ..self
        }
    }

    pub fn prefer_platforms(&self) -> Option<&PlatformOrder> {
        self.prefer_platforms.as_ref()
    }

    pub fn entries(&self) -> &[ChainEntry] {
        &self.entries
    }

    /// The same chain with its positions in `order` (indices of the current positions), every
    /// other field kept; `None` unless `order` names each position exactly once, so a reorder
    /// never adds, drops or repeats one.
    pub fn permuted(&self, order: &[usize]) -> Option<Self> {
        let mut seen = vec![false; self.entries.len()];
        for &i in order {
            if std::mem::replace(seen.get_mut(i)?, true) {
                return None;
            }
        }
        if order.len() != self.entries.len() {
            return None;
        }
        Some(Self {
            entries: order
                .iter()
                .filter_map(|&i| self.entries.get(i).cloned())
                .collect(),
            ..self.clone()
        })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_read_back_from_storage_is_checked_like_one_written() {
        assert!(serde_json::from_str::<Chain>(r#"["a","b"]"#).is_ok());
        assert!(serde_json::from_str::<Chain>("[]").is_err(), "empty");
        let long: Vec<String> = (0..=MAX_DEPTH_LIMIT).map(|i| format!("m{i}")).collect();
        assert!(serde_json::from_str::<Chain>(&serde_json::to_string(&long).unwrap()).is_err());
        let c: Chain = serde_json::from_str(r#"["a"]"#).unwrap();
        assert_eq!(serde_json::to_string(&c).unwrap(), r#"["a"]"#);
    }

    fn names(n: usize) -> Vec<ChainEntry> {
        (0..n)
            .filter_map(|i| crate::config::RouteName::parse(&format!("m{i}")).ok())
            .map(ChainEntry::Name)
            .collect()
    }

    #[test]
    fn a_stored_chain_with_a_bad_spread_is_refused_at_read_back_and_old_rows_still_read() {
        assert!(
            serde_json::from_str::<Chain>(r#"["a",{"spread":[{"model":"b","weight":2}]}]"#).is_ok()
        );
        assert!(serde_json::from_str::<Chain>(r#"["a",{"spread":[]}]"#).is_err());
        assert!(
            serde_json::from_str::<Chain>(r#"[{"spread":[{"model":"b","weight":0}]}]"#).is_err()
        );
        let old: Chain = serde_json::from_str(r#"["a","b"]"#).unwrap();
        assert_eq!(old.len(), 2);
    }

    #[test]
    fn a_permutation_reorders_the_positions_and_keeps_every_other_field() {
        let c = Chain::new(names(3), 5).unwrap().with_cache_ttl(Some(60));
        let p = c.permuted(&[2, 0, 1]).unwrap();
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"["m2","m0","m1"]"#);
        assert_eq!(p.cache_ttl_s(), Some(60));
        assert!(c.permuted(&[0, 0, 1]).is_none(), "a repeat");
        assert!(c.permuted(&[0, 1]).is_none(), "a drop");
        assert!(c.permuted(&[0, 1, 3]).is_none(), "no such position");
    }

    #[test]
    fn cache_affinity_is_off_by_default_and_bounded() {
        assert_eq!(check_cache_affinity("cache_affinity_s", None), Ok(None));
        assert_eq!(
            check_cache_affinity("cache_affinity_s", Some(300)),
            Ok(Some(300))
        );
        assert!(check_cache_affinity("cache_affinity_s", Some(0)).is_err());
        assert!(check_cache_affinity("cache_affinity_s", Some(MAX_CACHE_AFFINITY_S + 1)).is_err());
    }

    #[test]
    fn chain_longer_than_max_fallback_depth_is_refused_at_write() {
        let err = Chain::new(names(6), 5).err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("chain has 6 entries but routing.max_fallback_depth allows at most 5")
        );
        assert!(Chain::new(names(5), 5).is_ok());
    }

    #[test]
    fn empty_chain_is_refused() {
        assert!(Chain::new(vec![], 5).is_err());
    }
}
