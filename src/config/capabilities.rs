//! A model's or alias's capabilities as a sorted set without duplicates.

use super::names::Capability;
use serde::{Deserialize, Serialize};

/// Sorted and free of duplicates however it arrives (an admin body or a row read back from
/// D1), so `contains` can binary-search it. Stored and shown as a JSON array.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "Vec<Capability>", into = "Vec<Capability>")]
pub struct CapabilitySet(Vec<Capability>);

impl From<Vec<Capability>> for CapabilitySet {
    fn from(mut caps: Vec<Capability>) -> Self {
        super::sort::sort(&mut caps);
        caps.dedup();
        Self(caps)
    }
}

impl From<CapabilitySet> for Vec<Capability> {
    fn from(set: CapabilitySet) -> Self {
        set.0
    }
}

impl CapabilitySet {
    pub fn contains(&self, wanted: &Capability) -> bool {
        self.0.binary_search(wanted).is_ok()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Capability> {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(names: &[&str]) -> Vec<Capability> {
        names
            .iter()
            .map(|n| Capability::parse(n).unwrap())
            .collect()
    }

    #[test]
    fn a_set_read_back_unsorted_with_duplicates_is_sorted_and_deduplicated() {
        let set: CapabilitySet =
            serde_json::from_str(r#"["vision","chat","vision","tools"]"#).unwrap();
        assert_eq!(Vec::from(set.clone()), caps(&["chat", "tools", "vision"]));
        for c in caps(&["chat", "tools", "vision"]) {
            assert!(set.contains(&c));
        }
        assert!(!set.contains(&caps(&["embeddings"])[0]));
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            r#"["chat","tools","vision"]"#
        );
    }
}
