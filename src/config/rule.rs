//! A routing rule's chain: what to try, left to right, for one requested name.

use super::names::RouteName;
use super::ConfigError;
use serde::{Deserialize, Serialize};

/// Non-empty and no longer than the tenant's `max_fallback_depth` when it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Chain(Vec<RouteName>);

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
