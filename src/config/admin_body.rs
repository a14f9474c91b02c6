//! Admin request bodies: parsed strictly (unknown fields refused, the failing field named) and turned
//! into validated config types in one step.

use super::alias::{refuse_reserved, RankBy, Weights};
pub use super::body_reader::{parse_body, parse_optional_body};
use super::condition::When;
use super::names::{AliasName, Capability, ModelId, ProviderName, RouteName, TenantId};
use super::provider::{
    BaseUrl, Cloud, KeyStrategy, NewKey, NewProvider, Platform, ProviderKey, ProviderKind,
    Publisher,
};
use super::response_cache::check_cache_ttl;
use super::rule::check_cache_affinity;
pub use super::settings_body::{validate_settings, BreakerReset};
use super::{
    Alias, CatalogModel, Chain, ChainEntry, ConfigError, CostTier, NonEmpty, OnRefusal,
    RateLimitSignal, Resilience, RetryPolicy, Rule,
};
use serde::Deserialize;

/// The provider `p` of an admin body's JSON, its keys literal: the tests' one way to make one.
#[cfg(test)]
pub fn test_provider(body: &str) -> super::Provider {
    let b: ProviderBody = parse_body(body.as_bytes()).unwrap();
    b.validate(ProviderName::parse("p").unwrap())
        .unwrap()
        .resolve(|_| None)
        .unwrap()
}

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

/// `"sk-..."`, or `{"secret": "PROVIDER_OPENAI_2"}` naming a Worker secret. A struct variant,
/// not a newtype around a struct: serde reads an untagged struct variant from an object only.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum KeyInput {
    Literal(String),
    Secret { secret: String },
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderBody {
    pub kind: ProviderKind,
    pub base_url: BaseUrl,
    pub keys: Vec<KeyInput>,
    #[serde(default)]
    pub key_strategy: KeyStrategy,
    #[serde(default)]
    pub timeout_ms: Option<u32>,
    #[serde(default)]
    pub retry: Option<RetryPolicy>,
    #[serde(default)]
    pub rate_limit_signals: Vec<RateLimitSignal>,
    #[serde(default)]
    pub auth_cooldown_ms: Option<u64>,
    #[serde(default)]
    pub rpm: Option<u32>,
    pub max_park_ms: Option<u64>,
    pub rate_limit_cooldown_ms: Option<u64>,
    /// `azure_openai`: the `api-version` every call carries.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `bedrock` and `vertex`: the region (Vertex's location).
    #[serde(default)]
    pub region: Option<String>,
    /// `vertex`: the Google Cloud project.
    #[serde(default)]
    pub project: Option<String>,
    /// `vertex`: whose models it calls.
    #[serde(default)]
    pub publisher: Option<Publisher>,
    /// Overrides the platform the kind and host imply.
    #[serde(default)]
    pub platform: Option<Platform>,
}

pub const MAX_KEYS: usize = 64;
pub const DEFAULT_TIMEOUT_MS: u32 = 30_000;

impl ProviderBody {
    pub fn validate(self, name: ProviderName) -> Result<NewProvider, ConfigError> {
        let count_error =
            || ConfigError::invalid("keys", format!("must list 1 to {MAX_KEYS} keys"));
        if self.keys.len() > MAX_KEYS {
            return Err(count_error());
        }
        let mut keys: Vec<NewKey> = Vec::with_capacity(self.keys.len());
        for (i, input) in self.keys.into_iter().enumerate() {
            let key = match input {
                KeyInput::Literal(secret) => {
                    NewKey::Literal(ProviderKey::of_kind(self.kind, i, secret)?)
                }
                KeyInput::Secret { secret } => NewKey::secret(secret)?,
            };
            if keys.iter().any(|k| k.id() == key.id()) {
                return Err(ConfigError::invalid("keys", "the same key is listed twice"));
            }
            keys.push(key);
        }
        let keys = NonEmpty::new(keys).ok_or_else(count_error)?;
        let timeout_ms = self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !(1..=600_000).contains(&timeout_ms) {
            return Err(ConfigError::invalid("timeout_ms", "must be 1 to 600000"));
        }
        let cloud = Cloud {
            api_version: self.api_version,
            region: self.region,
            project: self.project,
            publisher: self.publisher,
            platform: self.platform,
        }
        .validate(self.kind)?;
        Ok(NewProvider {
            name,
            kind: self.kind,
            cloud,
            base_url: self.base_url,
            keys,
            key_strategy: self.key_strategy,
            timeout_ms,
            resilience: Resilience::validate(
                self.retry,
                self.rate_limit_signals,
                self.auth_cooldown_ms,
                self.rpm,
                (self.max_park_ms, self.rate_limit_cooldown_ms),
            )?,
        })
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
            .with_on_refusal(self.on_refusal);
        Ok(Rule {
            name,
            matches: self.match_,
            priority: self.priority,
            when: self.when.map(When::parse).transpose()?,
            chain,
        })
    }
}

/// Alias names share the caller's `model` namespace with catalog ids; this is the one check both
/// admin writes use.
pub fn alias_name_from(route: &str) -> Result<AliasName, ConfigError> {
    refuse_reserved("name", route)?;
    AliasName::parse(route).map_err(|e| ConfigError::invalid("name", e.to_string()))
}

#[cfg(test)]
#[path = "admin_body_tests.rs"]
mod tests;
