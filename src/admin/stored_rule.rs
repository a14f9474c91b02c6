//! A routing rule as a storage row holds it, and read back from one: the chain's entries as
//! JSON, with `when_json`, `on_refusal`, `cache_affinity_s`, `cache_ttl_s` and `prompt_cache` in
//! columns beside it. Every read is checked again like a write, so a damaged row is refused, never routed by.

use super::store::{StoreError, Stored};
use crate::config::condition::When;
use crate::config::{Chain, OnRefusal, PlatformOrder, RouteName, Rule};
use serde::de::DeserializeOwned;

/// A stored JSON value (a spec, settings, a policy) read back into its type.
pub fn parse_stored<T: DeserializeOwned>(json: &str) -> Stored<T> {
    serde_json::from_str(json).map_err(|e| StoreError::new("stored spec", e))
}

/// A value as its stored JSON.
pub fn to_stored<T: serde::Serialize>(value: &T) -> Stored<String> {
    serde_json::to_string(value).map_err(|e| StoreError::new("encode spec", e))
}

/// The `on_refusal` column's word for each choice (what `stored_rule` reads back).
pub fn on_refusal_column(o: OnRefusal) -> &'static str {
    match o {
        OnRefusal::Answer => "answer",
        OnRefusal::Fallback => "fallback",
    }
}

/// A tenant's rule rows, every column `RuleRow` reads: the admin listing and the config load
/// share it, so a column added to the row is read back by both.
pub const RULE_ROWS_SQL: &str = "SELECT name, match_name, priority, when_json, on_refusal, chain, \
     cache_affinity_s, cache_ttl_s, prompt_cache, prefer_platforms, updated_at \
     FROM routing_rules WHERE tenant_id = ?1 ORDER BY match_name, priority, name";

/// A rule's row as stored (keyed by name, `when_json` and `on_refusal` beside the
/// chain).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct RuleRow {
    pub name: String,
    pub match_name: String,
    pub priority: f64,
    pub when_json: Option<String>,
    pub on_refusal: String,
    pub chain: String,
    pub cache_affinity_s: Option<f64>,
    /// The response cache's TTL for this rule (migration 0007).
    #[serde(default)]
    pub cache_ttl_s: Option<f64>,
    /// The rule's `prompt_cache` as JSON (migration 0008).
    #[serde(default)]
    pub prompt_cache: Option<String>,
    /// The rule's `prefer_platforms` as a JSON list (migration 0010).
    #[serde(default)]
    pub prefer_platforms: Option<String>,
    pub updated_at: f64,
}

/// A rule's columns as written: the chain's entries, `when_json`, the `on_refusal` word, and the
/// JSON of `prompt_cache` and `prefer_platforms` (`None` where the rule has none).
pub struct RuleColumns {
    pub chain: String,
    pub when_json: Option<String>,
    pub on_refusal: &'static str,
    pub prompt_cache: Option<String>,
    pub prefer_platforms: Option<String>,
}

impl RuleColumns {
    pub fn of(rule: &Rule) -> Stored<Self> {
        let chain = &rule.chain;
        Ok(Self {
            chain: to_stored(chain)?,
            when_json: rule
                .when
                .as_ref()
                .map(|w| to_stored(w.json()))
                .transpose()?,
            on_refusal: on_refusal_column(chain.on_refusal()),
            prompt_cache: chain.prompt_cache().as_ref().map(to_stored).transpose()?,
            prefer_platforms: chain.prefer_platforms().map(to_stored).transpose()?,
        })
    }
}

/// A rule read back, checked again like one written (its chain by `Chain`'s serde, its
/// `cache_affinity_s`, priority and `when` by the same rules as the admin body): a damaged row is
/// refused, never routed by.
pub fn stored_rule(row: &RuleRow) -> Stored<Rule> {
    let damaged = |why: &str| StoreError::new("stored rule", why);
    let whole = |v: f64, lo: f64, hi: f64| v.fract() == 0.0 && (lo..=hi).contains(&v);
    let secs = match row.cache_affinity_s {
        None => None,
        Some(s) if whole(s, 0.0, f64::from(u32::MAX)) => Some(s as u32),
        Some(_) => return Err(damaged("bad cache_affinity_s")),
    };
    let secs = crate::config::rule::check_cache_affinity("cache_affinity_s", secs)
        .map_err(|e| StoreError::new("stored rule", e))?;
    let ttl = match row.cache_ttl_s {
        None => None,
        Some(s) if whole(s, 0.0, f64::from(u32::MAX)) => Some(s as u32),
        Some(_) => return Err(damaged("bad cache_ttl_s")),
    };
    let ttl = crate::config::response_cache::check_cache_ttl("cache_ttl_s", ttl)
        .map_err(|e| StoreError::new("stored rule", e))?;
    if !whole(row.priority, f64::from(i32::MIN), f64::from(i32::MAX)) {
        return Err(damaged("bad priority"));
    }
    let on_refusal = match row.on_refusal.as_str() {
        "answer" => OnRefusal::Answer,
        "fallback" => OnRefusal::Fallback,
        _ => return Err(damaged("bad on_refusal")),
    };
    let prompt_cache = row.prompt_cache.as_deref().map(parse_stored).transpose()?;
    let platforms = row
        .prefer_platforms
        .as_deref()
        .map(parse_stored)
        .transpose()?;
    let platforms = PlatformOrder::checked("prefer_platforms", platforms)
        .map_err(|e| StoreError::new("stored rule", e))?;
    let name = |s: &str| RouteName::parse(s).map_err(|e| StoreError::new("stored rule", e));
    let when = match &row.when_json {
        None => None,
        Some(json) => {
            Some(When::parse(parse_stored(json)?).map_err(|e| StoreError::new("stored rule", e))?)
        }
    };
    Ok(Rule {
        name: name(&row.name)?,
        matches: name(&row.match_name)?,
        priority: row.priority as i32,
        when,
        chain: parse_stored::<Chain>(&row.chain)?
            .with_cache_affinity(secs)
            .with_cache_ttl(ttl)
            .with_on_refusal(on_refusal)
            .with_prompt_cache(prompt_cache)
            .with_prefer_platforms(platforms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> RuleRow {
        RuleRow {
            name: "coding".into(),
            match_name: "smart".into(),
            priority: 10.0,
            when_json: None,
            on_refusal: "fallback".into(),
            chain: r#"["a","b"]"#.into(),
            cache_affinity_s: Some(300.0),
            cache_ttl_s: Some(0.0),
            prompt_cache: Some(r#"{"inject":true,"ttl":"1h"}"#.into()),
            prefer_platforms: Some(r#"["bedrock","direct"]"#.into()),
            updated_at: 1_000.0,
        }
    }

    fn refused(edit: impl FnOnce(&mut RuleRow)) -> String {
        let mut r = row();
        edit(&mut r);
        stored_rule(&r).map(|_| ()).unwrap_err().cause().to_owned()
    }

    #[test]
    fn a_sound_row_reads_back_with_its_columns_beside_the_chain() {
        let rule = stored_rule(&row()).unwrap();
        assert_eq!(rule.name.as_str(), "coding");
        assert_eq!(rule.matches.as_str(), "smart");
        assert_eq!(rule.priority, 10);
        assert_eq!(rule.chain.cache_affinity_s(), Some(300));
        assert_eq!(rule.chain.cache_ttl_s(), Some(0));
        assert_eq!(rule.chain.on_refusal(), OnRefusal::Fallback);
        let written = on_refusal_column(rule.chain.on_refusal());
        assert_eq!(written, row().on_refusal);
        let columns = RuleColumns::of(&rule).unwrap();
        assert_eq!(columns.prompt_cache, row().prompt_cache);
        assert_eq!(columns.prefer_platforms, row().prefer_platforms);
        assert_eq!(Some(columns.chain), Some(row().chain));
        let bad = RuleRow {
            prompt_cache: Some(r#"{"inject":true,"ttl":"2h"}"#.into()),
            ..row()
        };
        assert!(
            stored_rule(&bad).is_err(),
            "a damaged prompt_cache is refused"
        );
        for damaged in [r#"["bedrock","bedrock"]"#, "[]", r#"["moon"]"#] {
            let bad = RuleRow {
                prefer_platforms: Some(damaged.into()),
                ..row()
            };
            assert!(stored_rule(&bad).is_err(), "{damaged} is refused");
        }
    }

    #[test]
    fn a_fractional_or_negative_number_column_is_a_damaged_row() {
        assert_eq!(refused(|r| r.priority = 1.5), "bad priority");
        assert_eq!(refused(|r| r.priority = 3e9), "bad priority");
        let bad = refused(|r| r.cache_affinity_s = Some(-1.0));
        assert_eq!(bad, "bad cache_affinity_s");
        assert_eq!(refused(|r| r.cache_ttl_s = Some(0.5)), "bad cache_ttl_s");
    }

    #[test]
    fn a_stored_value_outside_the_admin_bounds_is_refused_like_a_write() {
        // Whole, but no admin body could have set it: 0 s of affinity.
        let mut r = row();
        r.cache_affinity_s = Some(0.0);
        assert!(stored_rule(&r).is_err());
    }

    #[test]
    fn an_unknown_on_refusal_word_or_an_empty_chain_is_refused() {
        assert_eq!(refused(|r| r.on_refusal = "retry".into()), "bad on_refusal");
        assert!(stored_rule(&RuleRow {
            chain: "[]".into(),
            ..row()
        })
        .is_err());
        assert!(stored_rule(&RuleRow {
            name: String::new(),
            ..row()
        })
        .is_err());
    }

    #[test]
    fn each_on_refusal_choice_has_the_column_word_read_back() {
        for o in [OnRefusal::Answer, OnRefusal::Fallback] {
            let r = RuleRow {
                on_refusal: on_refusal_column(o).into(),
                ..row()
            };
            assert_eq!(stored_rule(&r).unwrap().chain.on_refusal(), o);
        }
    }
}
