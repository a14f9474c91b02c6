//! A routing rule's chain: what to try, left to right, for one requested name.

use super::names::RouteName;
use super::ConfigError;
use serde::{Deserialize, Serialize};

/// The longest `max_fallback_depth` a tenant may set: no stored chain is longer.
pub const MAX_DEPTH_LIMIT: u32 = 20;

/// Non-empty and no longer than the tenant's `max_fallback_depth` when it was written. A chain
/// read back from D1 is checked again (non-empty, at most `MAX_DEPTH_LIMIT`), so a hand-edited
/// or damaged row cannot bypass `Chain::new`.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<RouteName>", into = "Vec<RouteName>")]
pub struct Chain(Vec<RouteName>);

impl TryFrom<Vec<RouteName>> for Chain {
    type Error = ConfigError;
    fn try_from(entries: Vec<RouteName>) -> Result<Self, ConfigError> {
        Self::new(entries, MAX_DEPTH_LIMIT)
    }
}

impl From<Chain> for Vec<RouteName> {
    fn from(c: Chain) -> Self {
        c.0
    }
}

impl Chain {
    /// Refused when the rule is written, never truncated when it is used.
    pub fn new(entries: Vec<RouteName>, max_depth: u32) -> Result<Self, ConfigError> {
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
        Ok(Self(entries))
    }

    pub fn entries(&self) -> &[RouteName] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
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

    fn names(n: usize) -> Vec<RouteName> {
        (0..n)
            .filter_map(|i| RouteName::parse(&format!("m{i}")).ok())
            .collect()
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
