//! An alias is a constraint, not a pin: it keeps meaning the same thing as catalogs change.

use super::capabilities::CapabilitySet;
use super::names::{AliasName, Capability, ModelId, ProviderName};
use super::on_refusal::OnRefusal;
use super::platform_order::PlatformOrder;
use super::prompt_cache::PromptCache;
use super::ConfigError;
use serde::{Deserialize, Serialize};

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostTier {
    Cheapest,
    #[default]
    Balanced,
    Best,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Alias {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<ModelId>,
    #[serde(default)]
    pub capabilities: CapabilitySet,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_context_window: Option<u32>,
    #[serde(default)]
    pub provider_preference: Vec<ProviderName>,
    #[serde(default)]
    pub cost_tier: CostTier,
    /// How the models that pass the constraints are ordered. `price` (absent in every
    /// alias written before) is the spec's resolution exactly.
    #[serde(default, skip_serializing_if = "RankBy::is_price")]
    pub rank_by: RankBy,
    /// The blend `rank_by: "score"` uses; `None` is `Weights::default()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<Weights>,
    /// Prompt-cache affinity in seconds; `None` is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_affinity_s: Option<u32>,
    /// The response cache's TTL for this name (seconds; 0 turns it off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ttl_s: Option<u32>,
    /// Dated models first, newest first, ahead of the alias's ranking.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prefer_newest_version: bool,
    /// What a safety refusal of this alias's answer does.
    #[serde(default, skip_serializing_if = "OnRefusal::is_answer")]
    pub on_refusal: OnRefusal,
    /// Prompt-cache breakpoints injected into Anthropic-shaped requests (`None`: as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    /// Candidates that tie on the alias's whole order sort by this platform order before the
    /// model id; `None` leaves the id alone to break ties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefer_platforms: Option<PlatformOrder>,
}

/// The axis a ranked alias orders by.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankBy {
    /// Price by `cost_tier`, resolved once per config.
    #[default]
    Price,
    /// EWMA of total latency, ascending.
    Latency,
    /// EWMA of time to first byte, ascending.
    Ttfb,
    /// Success ratio over the recent window, descending.
    Success,
    /// The weighted blend of the normalised axes (`weights`), descending.
    Score,
}

impl RankBy {
    pub fn is_price(&self) -> bool {
        *self == Self::Price
    }
}

/// Weights of the normalised axes in a score (a balanced blend by default). An object
/// that is given names every weight it wants: an absent one is 0.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Weights {
    #[serde(default)]
    pub success: f64,
    #[serde(default)]
    pub latency: f64,
    /// Time to first byte: a fourth axis, 0 unless set (what a streaming caller feels).
    #[serde(default)]
    pub ttfb: f64,
    #[serde(default)]
    pub price: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            success: 0.5,
            latency: 0.25,
            ttfb: 0.0,
            price: 0.25,
        }
    }
}

impl Weights {
    /// Non-negative finite numbers, at least one positive (a score of all zeros orders nothing).
    pub fn validate(self) -> Result<Self, ConfigError> {
        for (field, w) in [
            ("weights.success", self.success),
            ("weights.latency", self.latency),
            ("weights.ttfb", self.ttfb),
            ("weights.price", self.price),
        ] {
            if !(w.is_finite() && (0.0..=1_000_000.0).contains(&w)) {
                return Err(ConfigError::invalid(
                    field,
                    "must be a number from 0 to 1000000",
                ));
            }
        }
        if self.success + self.latency + self.ttfb + self.price <= 0.0 {
            return Err(ConfigError::invalid(
                "weights",
                "at least one weight must be positive",
            ));
        }
        Ok(self)
    }
}

/// `auto` and every `auto:...` name (any case) belong to the gateway's ranked chains.
pub fn is_reserved(name: &str) -> bool {
    let lower = |s: &str| s.to_ascii_lowercase();
    lower(name) == "auto" || name.get(..5).is_some_and(|p| lower(p) == "auto:")
}

/// Refuses a reserved name where an admin write would define it (`field` names where it came).
pub fn refuse_reserved(field: &str, name: &str) -> Result<(), ConfigError> {
    if is_reserved(name) {
        return Err(ConfigError::invalid(
            field,
            format!("'{name}' is reserved: 'auto' and 'auto:...' name the gateway's ranked chains"),
        ));
    }
    Ok(())
}

/// The four aliases every tenant is created with.
pub fn default_aliases() -> Vec<(AliasName, Alias)> {
    let chat = || {
        Capability::parse("chat")
            .ok()
            .into_iter()
            .collect::<Vec<_>>()
    };
    let alias = |min_context_window, cost_tier| Alias {
        capabilities: chat().into(),
        min_context_window,
        cost_tier,
        ..Alias::default()
    };
    [
        ("fast", alias(None, CostTier::Cheapest)),
        ("balanced", alias(Some(32_000), CostTier::Balanced)),
        ("best", alias(None, CostTier::Best)),
        ("long", alias(Some(128_000), CostTier::Balanced)),
    ]
    .into_iter()
    .filter_map(|(name, a)| AliasName::parse(name).ok().map(|n| (n, a)))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::{
        parse_body, validate_settings, AliasBody, ModelBody, RuleBody,
    };
    use crate::config::SettingsOverrides;

    fn alias(json: &str) -> Result<Alias, ConfigError> {
        parse_body::<AliasBody>(json.as_bytes()).and_then(AliasBody::validate)
    }

    fn err(r: Result<impl std::fmt::Debug, ConfigError>) -> String {
        r.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn rank_by_price_is_the_default_and_an_alias_written_before_reads_back_unchanged() {
        let a = alias(r#"{"capabilities":["chat"]}"#).unwrap();
        assert_eq!((a.rank_by, a.weights), (RankBy::Price, None));
        let stored = r#"{"capabilities":["chat"],"provider_preference":[],"cost_tier":"best"}"#;
        let old: Alias = serde_json::from_str(stored).unwrap();
        assert_eq!(serde_json::to_string(&old).unwrap(), stored);
        let a = alias(r#"{"rank_by":"score","weights":{"success":1,"ttfb":2}}"#).unwrap();
        assert_eq!(a.rank_by, RankBy::Score);
        assert_eq!(
            a.weights,
            Some(Weights {
                success: 1.0,
                latency: 0.0,
                ttfb: 2.0,
                price: 0.0
            })
        );
        let spec = serde_json::to_value(&a).unwrap();
        assert_eq!(spec["rank_by"], "score");
        assert_eq!(serde_json::from_value::<Alias>(spec).unwrap(), a);
    }

    #[test]
    fn bad_rank_by_and_weights_are_refused_on_write_with_the_field_path() {
        assert!(err(alias(r#"{"rank_by":"vibes"}"#)).starts_with("rank_by:"));
        assert_eq!(
            err(alias(r#"{"rank_by":"score","weights":{"success":-1}}"#)),
            "weights.success: must be a number from 0 to 1000000"
        );
        assert_eq!(
            err(alias(
                r#"{"rank_by":"score","weights":{"success":0,"price":0}}"#
            )),
            "weights: at least one weight must be positive"
        );
        let e = err(alias(r#"{"rank_by":"score","weights":{"speed":1}}"#));
        assert!(e.starts_with("weights"), "{e}");
        assert_eq!(
            err(alias(r#"{"rank_by":"latency","weights":{"latency":1}}"#)),
            "weights: only rank_by \"score\" uses weights"
        );
    }

    #[test]
    fn a_model_id_or_rule_match_named_auto_in_any_case_is_refused_on_write() {
        let model = |id: &str| {
            parse_body::<ModelBody>(br#"{"provider":"p","context_window":8000}"#)
                .and_then(|b| b.validate(ModelId::parse(id).unwrap_or_else(|_| unreachable!())))
        };
        assert!(err(model("AUTO")).starts_with("id: 'AUTO' is reserved"));
        assert!(err(model("auto:x")).starts_with("id: 'auto:x' is reserved"));
        assert!(model("autopilot").is_ok());
        let rule = |m: &str| {
            parse_body::<RuleBody>(format!(r#"{{"match":"{m}","chain":["a"]}}"#).as_bytes())
                .and_then(|b| b.validate(5))
        };
        assert!(err(rule("Auto:Fast")).starts_with("match: 'Auto:Fast' is reserved"));
        assert!(rule("my-app").is_ok());
        assert!(err(refuse_reserved("name", "auto")).starts_with("name: 'auto' is reserved"));
    }

    #[test]
    fn exploration_share_is_a_setting_from_0_to_1_defaulting_to_2_percent() {
        let parse = |json: &str| {
            parse_body::<SettingsOverrides>(json.as_bytes()).and_then(validate_settings)
        };
        assert_eq!(
            parse(r#"{"exploration_share":0}"#)
                .unwrap()
                .exploration_share,
            Some(0.0)
        );
        for bad in ["1.5", "-0.1"] {
            assert_eq!(
                err(parse(&format!(r#"{{"exploration_share":{bad}}}"#))),
                "exploration_share: must be a number from 0 to 1"
            );
        }
        let d = crate::config::Defaults::default();
        assert_eq!(
            d.effective(&SettingsOverrides::default()).exploration_share,
            0.02
        );
    }
}
