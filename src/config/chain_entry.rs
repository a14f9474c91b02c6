//! One position of a routing rule's chain: a name (a model or an alias), or a weighted spread
//! over several names of which each request draws one.
//!
//! Stored and shown as written: `"gpt-4o"` or `{"spread": [{"model": "m1", "weight": 3}, ...]}`.

use super::names::RouteName;
use super::ConfigError;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// The largest weight a spread member may have: weights are proportions, and 1,000 states any
/// useful one (0.1% steps) while the sum of a spread's weights stays far inside a `u64` draw.
pub const MAX_WEIGHT: u32 = 1_000;
/// The most members a spread may list (a chain's own limit, `MAX_DEPTH_LIMIT`).
pub const MAX_MEMBERS: usize = 20;

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpreadMember {
    /// A model id or an alias.
    pub model: RouteName,
    /// Positive integer, at most `MAX_WEIGHT`: this member's share is weight / sum of weights.
    pub weight: u32,
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum ChainEntry {
    /// A model id or an alias: one candidate.
    Name(RouteName),
    /// One member drawn per request by weight among those that can serve: still one candidate.
    Spread { spread: Vec<SpreadMember> },
}

impl ChainEntry {
    /// The names this position may route to (one for a name, every member of a spread).
    pub fn names(&self) -> Vec<&RouteName> {
        match self {
            Self::Name(n) => vec![n],
            Self::Spread { spread } => spread.iter().map(|m| &m.model).collect(),
        }
    }

    /// Refused at write and at read-back alike; `at` is the position, for the field path
    /// (`chain[1].spread[0].weight`).
    pub fn check(&self, at: usize) -> Result<(), ConfigError> {
        let Self::Spread { spread } = self else {
            return Ok(());
        };
        let field = format!("chain[{at}].spread");
        if spread.is_empty() || spread.len() > MAX_MEMBERS {
            let why = format!("must list 1 to {MAX_MEMBERS} members");
            return Err(ConfigError::invalid(&field, why));
        }
        for (i, m) in spread.iter().enumerate() {
            if !(1..=MAX_WEIGHT).contains(&m.weight) {
                let why = format!("must be an integer from 1 to {MAX_WEIGHT}");
                return Err(ConfigError::invalid(&format!("{field}[{i}].weight"), why));
            }
            if let Some(first) = spread[..i].iter().position(|o| o.model == m.model) {
                let why = format!("'{}' is already member {first} of this spread", m.model);
                return Err(ConfigError::invalid(&format!("{field}[{i}].model"), why));
            }
        }
        Ok(())
    }
}

/// By hand rather than `untagged`, so a bad member names its own path
/// (`chain[1].spread[0].weight: invalid type`) instead of "did not match any variant".
impl<'de> Deserialize<'de> for ChainEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = ChainEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a model or alias name, or an object {\"spread\": [...]}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ChainEntry, E> {
                RouteName::parse(s)
                    .map(ChainEntry::Name)
                    .map_err(|e| E::custom(e.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ChainEntry, A::Error> {
                let mut spread = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "spread" || spread.is_some() {
                        return Err(de::Error::unknown_field(&key, &["spread"]));
                    }
                    spread = Some(map.next_value::<Vec<SpreadMember>>()?);
                }
                spread
                    .map(|spread| ChainEntry::Spread { spread })
                    .ok_or_else(|| de::Error::missing_field("spread"))
            }
        }
        d.deserialize_any(EntryVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::parse_body;

    fn entry(json: &str) -> Result<ChainEntry, ConfigError> {
        let e: ChainEntry = parse_body(json.as_bytes())?;
        e.check(1).map(|()| e)
    }

    #[test]
    fn a_spread_entry_reads_and_shows_back_as_written() {
        let json = r#"{"spread":[{"model":"m1","weight":3},{"model":"fast","weight":1}]}"#;
        let e = entry(json).unwrap();
        assert_eq!(serde_json::to_string(&e).unwrap(), json);
        assert_eq!(e.names().len(), 2);
        assert_eq!(
            serde_json::to_string(&entry(r#""gpt-4o""#).unwrap()).unwrap(),
            r#""gpt-4o""#
        );
    }

    fn field(r: Result<ChainEntry, ConfigError>) -> String {
        r.err().and_then(|e| e.field().map(str::to_owned)).unwrap()
    }

    #[test]
    fn a_spread_needs_at_least_one_member() {
        assert_eq!(field(entry(r#"{"spread":[]}"#)), "chain[1].spread");
    }

    #[test]
    fn a_spread_weight_is_a_positive_integer_up_to_the_max() {
        for w in ["0", "1001"] {
            let json = format!(
                r#"{{"spread":[{{"model":"a","weight":1}},{{"model":"b","weight":{w}}}]}}"#
            );
            assert_eq!(field(entry(&json)), "chain[1].spread[1].weight", "{w}");
        }
        // A type error names the member's own field too (the admin body path is relative here).
        let bad = parse_body::<ChainEntry>(br#"{"spread":[{"model":"a","weight":-1}]}"#);
        assert_eq!(bad.err().unwrap().field(), Some("spread[0].weight"));
        assert!(entry(r#"{"spread":[{"model":"a","weight":1000}]}"#).is_ok());
    }

    #[test]
    fn a_spread_lists_no_member_twice() {
        let json = r#"{"spread":[{"model":"a","weight":1},{"model":"b","weight":1},{"model":"a","weight":2}]}"#;
        assert_eq!(field(entry(json)), "chain[1].spread[2].model");
    }

    #[test]
    fn an_entry_is_a_name_or_a_spread_and_nothing_else() {
        assert!(parse_body::<ChainEntry>(br#"{"spreads":[]}"#).is_err());
        assert!(parse_body::<ChainEntry>(br#"{}"#).is_err());
        assert!(parse_body::<ChainEntry>(br#"3"#).is_err());
        assert!(
            parse_body::<ChainEntry>(br#"{"spread":[{"model":"a","weight":1,"x":1}]}"#).is_err()
        );
    }
}
