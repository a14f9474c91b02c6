//! A PATCH of a key's policy as the store applies it: an RFC 7396 merge patch of the stored JSON,
//! so the store merges it into whatever is stored at that moment (D1's `json_patch` in the same
//! statement as the write) and two PATCHes that race both land, field by field.

#[cfg(not(target_arch = "wasm32"))]
use super::store::{StoreError, Stored};
use crate::config::policy::Change;
use crate::config::{ConfigError, KeyPolicy, KeyPolicyChange};
use serde_json::{Map, Value};

/// A field set is its validated value, a field cleared is `null`, a field left alone is absent.
/// Every value is a whole field (`budget` always carries both `usd` and `period`), so the RFC 7396
/// merge of a patch is, field by field, an insert or (for `null`) a removal.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyPatch(Map<String, Value>);

fn cleared<T>(c: &Change<T>) -> bool {
    matches!(c, Change::Clear)
}

impl PolicyPatch {
    /// Every value the change sets is validated (and normalised: `models` sorted, `name`
    /// trimmed) here. Each rule of a policy concerns one field, so a merge of valid fields is a
    /// valid policy whatever it is merged into.
    pub fn new(change: KeyPolicyChange) -> Result<Self, ConfigError> {
        let clears = [
            ("name", cleared(&change.name)),
            ("models", cleared(&change.models)),
            ("rpm", cleared(&change.rpm)),
            ("tpm", cleared(&change.tpm)),
            ("budget", cleared(&change.budget)),
        ];
        let set = change.apply_to(KeyPolicy::default())?;
        let Ok(Value::Object(mut fields)) = serde_json::to_value(&set) else {
            return Err(ConfigError::invalid("body", "must be a JSON object"));
        };
        for (field, clear) in clears {
            if clear {
                fields.insert(field.to_owned(), Value::Null);
            }
        }
        Ok(Self(fields))
    }

    /// The patch as JSON text, for D1's `json_patch`.
    pub fn to_json(&self) -> String {
        // A map of string keys always serialises; an empty string would fail `json_patch` loudly.
        serde_json::to_string(&self.0).unwrap_or_default()
    }

    /// The patch merged into `stored` by RFC 7396, as `json_patch` does it: each field the patch
    /// names is replaced by its value, or removed when that is `null`. The in-memory store's
    /// merge (D1 merges in SQL).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn apply(&self, stored: &KeyPolicy) -> Stored<KeyPolicy> {
        let Value::Object(mut doc) =
            serde_json::to_value(stored).map_err(|e| StoreError::new("policy", e))?
        else {
            return Err(StoreError::new("policy", "not a JSON object"));
        };
        for (field, value) in &self.0 {
            if value.is_null() {
                doc.remove(field);
            } else {
                doc.insert(field.clone(), value.clone());
            }
        }
        serde_json::from_value(Value::Object(doc)).map_err(|e| StoreError::new("policy", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::parse_body;

    fn patch(body: &str) -> PolicyPatch {
        PolicyPatch::new(parse_body(body.as_bytes()).unwrap()).unwrap()
    }

    fn policy(body: &str) -> KeyPolicy {
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn a_patch_sets_clears_and_leaves_fields_one_by_one() {
        let stored = policy(r#"{"name":"a","rpm":5,"budget":{"usd":1.0,"period":"day"}}"#);
        let merged = patch(r#"{"rpm":null,"tpm":9,"budget":{"usd":2.5,"period":"month"}}"#)
            .apply(&stored)
            .unwrap();
        assert_eq!(
            merged,
            policy(r#"{"name":"a","tpm":9,"budget":{"usd":2.5,"period":"month"}}"#)
        );
    }

    #[test]
    fn a_patch_carries_only_what_it_changes_validated_and_normalised() {
        assert_eq!(
            patch(r#"{"models":["b","a","a"],"name":" x ","rpm":null}"#).to_json(),
            r#"{"models":["a","b"],"name":"x","rpm":null}"#
        );
        assert_eq!(patch("{}").to_json(), "{}");
        let bad = PolicyPatch::new(parse_body(br#"{"rpm":0}"#).unwrap());
        assert!(bad.is_err());
    }

    #[test]
    fn two_patches_of_different_fields_applied_in_turn_both_land() {
        let first = patch(r#"{"rpm":60}"#).apply(&KeyPolicy::default()).unwrap();
        let both = patch(r#"{"tpm":1000}"#).apply(&first).unwrap();
        assert_eq!((both.rpm, both.tpm), (Some(60), Some(1000)));
    }
}
