//! Admin request bodies: parsed strictly (unknown fields refused, the failing field named) and turned
//! into validated config types in one step.

use super::alias::{refuse_reserved, RankBy, Weights};
pub use super::body_reader::{parse_body, parse_optional_body};
use super::condition::When;
use super::names::{Capability, ModelId, ProviderName, RouteName, TenantId};
use super::platform_order::{PlatformOrder, PlatformWords};
pub use super::provider_body::{KeyInput, ProviderBody, DEFAULT_TIMEOUT_MS, MAX_KEYS};
use super::response_cache::check_cache_ttl;
use super::rule::check_cache_affinity;
pub use super::settings_body::{validate_settings, BreakerReset};
use super::{
    Alias, CatalogModel, Chain, ChainEntry, ConfigError, CostTier, OnRefusal, PromptCache, Rule,
};
use serde::Deserialize;

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantBody {
    pub id: TenantId,
    pub name: String,
}

impl TenantBody {
    pub fn validate(self) -> Result<(TenantId, String), ConfigError> {
        let name = self.name.trim().to_owned();
        if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
            return Err(ConfigError::invalid(
                "name",
                "must be 1 to 200 printable characters",
            ));
        }
        Ok((self.id, name))
    }
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelBody {
    pub provider: ProviderName,
    #[serde(default)]
    pub upstream_model: Option<String>,
    #[serde(default)]
    pub capabilities: Option<Vec<Capability>>,
    pub context_window: u32,
    #[serde(default)]
    pub input_price_per_mtok: f64,
    #[serde(default)]
    pub output_price_per_mtok: f64,
    #[serde(default)]
    pub cached_input_price_per_mtok: Option<f64>,
    #[serde(default)]
    pub cache_write_price_per_mtok: Option<f64>,
    #[serde(default)]
    pub cache_write_1h_price_per_mtok: Option<f64>,
    #[serde(default)]
    pub max_output_tokens: Option<u32>,
    #[serde(default)]
    pub fallback_model: Option<ModelId>,
    /// The shortest prefix the provider caches (default 1,024).
    #[serde(default)]
    pub min_cache_tokens: Option<u32>,
    pub quality_rank: Option<u32>,
}

fn price(field: &str, v: f64) -> Result<f64, ConfigError> {
    if v.is_finite() && (0.0..=1_000_000.0).contains(&v) {
        Ok(v)
    } else {
        Err(ConfigError::invalid(
            field,
            "must be a price from 0 to 1000000",
        ))
    }
}

/// Sorted and deduplicated so membership tests can binary-search.
fn capability_set(caps: Vec<Capability>) -> super::CapabilitySet {
    caps.into()
}

impl ModelBody {
    /// A model with no `capabilities` is a chat model: that is what this gateway serves.
    pub fn validate(self, id: ModelId) -> Result<CatalogModel, ConfigError> {
        refuse_reserved("id", id.as_str())?;
        let fallback_model = super::model::other_model(&id, self.fallback_model)?;
        let upstream_model = self.upstream_model.unwrap_or_else(|| id.to_string());
        if upstream_model.is_empty()
            || upstream_model.chars().count() > 256
            || upstream_model.chars().any(char::is_control)
        {
            return Err(ConfigError::invalid(
                "upstream_model",
                "must be 1 to 256 printable characters",
            ));
        }
        if self.context_window == 0 {
            return Err(ConfigError::invalid("context_window", "must be positive"));
        }
        if self
            .max_output_tokens
            .is_some_and(|t| t == 0 || t > 1_000_000)
        {
            return Err(ConfigError::invalid(
                "max_output_tokens",
                "must be 1 to 1000000",
            ));
        }
        let caps = match self.capabilities {
            Some(caps) => caps,
            None => Capability::parse("chat").into_iter().collect(),
        };
        Ok(CatalogModel {
            id,
            provider: self.provider,
            upstream_model,
            capabilities: capability_set(caps),
            context_window: self.context_window,
            input_price_per_mtok: price("input_price_per_mtok", self.input_price_per_mtok)?,
            output_price_per_mtok: price("output_price_per_mtok", self.output_price_per_mtok)?,
            cached_input_price_per_mtok: self
                .cached_input_price_per_mtok
                .map(|p| price("cached_input_price_per_mtok", p))
                .transpose()?,
            cache_write_price_per_mtok: self
                .cache_write_price_per_mtok
                .map(|p| price("cache_write_price_per_mtok", p))
                .transpose()?,
            cache_write_1h_price_per_mtok: self
                .cache_write_1h_price_per_mtok
                .map(|p| price("cache_write_1h_price_per_mtok", p))
                .transpose()?,
            max_output_tokens: self.max_output_tokens,
            fallback_model,
            min_cache_tokens: match self.min_cache_tokens {
                Some(t) if t > 1_000_000 => {
                    return Err(ConfigError::invalid(
                        "min_cache_tokens",
                        "must be 0 to 1000000",
                    ))
                }
                t => t.unwrap_or(super::model::DEFAULT_MIN_CACHE_TOKENS),
            },
            quality_rank: super::model::check_quality_rank(self.quality_rank)?,
        })
    }
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasBody {
    #[serde(default)]
    pub pin: Option<ModelId>,
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    #[serde(default)]
    pub min_context_window: Option<u32>,
    #[serde(default)]
    pub provider_preference: Vec<ProviderName>,
    #[serde(default)]
    pub cost_tier: CostTier,
    #[serde(default)]
    pub rank_by: RankBy,
    #[serde(default)]
    pub weights: Option<Weights>,
    /// Prompt-cache affinity in seconds; absent is off.
    #[serde(default)]
    pub cache_affinity_s: Option<u32>,
    /// The response cache's TTL for this name (seconds; 0 turns it off).
    #[serde(default)]
    pub cache_ttl_s: Option<u32>,
    #[serde(default)]
    pub prefer_newest_version: bool,
    #[serde(default)]
    pub on_refusal: OnRefusal,
    /// Prompt-cache breakpoints injected into Anthropic-shaped requests; absent is off.
    #[serde(default)]
    pub prompt_cache: Option<PromptCache>,
    /// Ties on the alias's whole order sort by this platform order.
    #[serde(default)]
    pub prefer_platforms: Option<PlatformWords>,
}

impl AliasBody {
    pub fn validate(self) -> Result<Alias, ConfigError> {
        let weights = self.weights.map(Weights::validate).transpose()?;
        if weights.is_some() && self.rank_by != RankBy::Score {
            return Err(ConfigError::invalid(
                "weights",
                "only rank_by \"score\" uses weights",
            ));
        }
        let mut seen = crate::config::SortedSet::new();
        if let Some(dup) = self.provider_preference.iter().find(|p| !seen.insert(*p)) {
            return Err(ConfigError::invalid(
                "provider_preference",
                format!("'{dup}' is listed twice"),
            ));
        }
        if self.provider_preference.len() > 32 || self.capabilities.len() > 32 {
            return Err(ConfigError::invalid(
                "capabilities",
                "at most 32 capabilities and 32 preferred providers",
            ));
        }
        Ok(Alias {
            pin: self.pin,
            capabilities: capability_set(self.capabilities),
            min_context_window: self.min_context_window,
            provider_preference: self.provider_preference,
            cost_tier: self.cost_tier,
            rank_by: self.rank_by,
            weights,
            cache_affinity_s: check_cache_affinity("cache_affinity_s", self.cache_affinity_s)?,
            cache_ttl_s: check_cache_ttl("cache_ttl_s", self.cache_ttl_s)?,
            prefer_newest_version: self.prefer_newest_version,
            on_refusal: self.on_refusal,
            prompt_cache: self.prompt_cache,
            prefer_platforms: PlatformOrder::from_words("prefer_platforms", self.prefer_platforms)?,
        })
    }
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleBody {
    #[serde(rename = "match")]
    pub match_: RouteName,
    /// Unique per tenant; defaults to `match` (what a rule written before has).
    #[serde(default)]
    pub name: Option<RouteName>,
    /// Rules sharing a match are tried lower first, then by name.
    #[serde(default)]
    pub priority: i32,
    /// The condition under which this rule gives the chain (`config::condition`).
    #[serde(default)]
    pub when: Option<serde_json::Map<String, serde_json::Value>>,
    pub chain: Vec<ChainEntry>,
    /// Prompt-cache affinity in seconds; absent is off.
    #[serde(default)]
    pub cache_affinity_s: Option<u32>,
    /// The response cache's TTL for this rule (seconds; 0 turns it off).
    #[serde(default)]
    pub cache_ttl_s: Option<u32>,
    /// What a safety refusal of this rule's answer does.
    #[serde(default)]
    pub on_refusal: OnRefusal,
    /// Prompt-cache breakpoints injected into Anthropic-shaped requests; absent is off.
    #[serde(default)]
    pub prompt_cache: Option<PromptCache>,
    /// A spread position draws among its members on the first listed platform that has one
    /// that can serve.
    #[serde(default)]
    pub prefer_platforms: Option<PlatformWords>,
}

impl RuleBody {
    pub fn validate(self, max_depth: u32) -> Result<Rule, ConfigError> {
        refuse_reserved("match", self.match_.as_str())?;
        let name = self.name.unwrap_or_else(|| self.match_.clone());
        refuse_reserved("name", name.as_str())?;
        let affinity = check_cache_affinity("cache_affinity_s", self.cache_affinity_s)?;
        let chain = Chain::new(self.chain, max_depth)?
            .with_cache_affinity(affinity)
            .with_cache_ttl(check_cache_ttl("cache_ttl_s", self.cache_ttl_s)?)
            .with_on_refusal(self.on_refusal)
            .with_prompt_cache(self.prompt_cache)
            .with_prefer_platforms(PlatformOrder::from_words(
                "prefer_platforms",
                self.prefer_platforms,
            )?);
        Ok(Rule {
            name,
            matches: self.match_,
            priority: self.priority,
            when: self.when.map(When::parse).transpose()?,
            chain,
        })
    }
}

#[cfg(test)]
#[path = "admin_body_tests.rs"]
mod tests;
