//! A tenant's catalog as admins see it: never a provider key, only its id and last four characters.

use crate::config::alias::{RankBy, Weights};
use crate::config::{condition::When, PlatformOrder, Rule};
use crate::config::{
    Alias, AliasName, CapabilitySet, CatalogModel, Chain, CostTier, KeyStrategy, ModelId,
    OnRefusal, Platform, PromptCache, ProviderKind, ProviderName, Publisher, RateLimitSignal,
    RetryPolicy, RouteName, StoredKey, StoredProvider,
};
use crate::health::headroom::Headrooms;
use serde::Serialize;

/// A provider: its keys as ids, last four characters and secret names.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct ProviderView<'a> {
    pub name: &'a ProviderName,
    pub kind: ProviderKind,
    pub base_url: &'a str,
    /// The platform it runs on: its `platform` override, or what its kind and host imply.
    pub platform: Platform,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher: Option<Publisher>,
    pub keys: Vec<KeyRef<'a>>,
    pub key_strategy: KeyStrategy,
    pub timeout_ms: u32,
    pub retry: RetryPolicy,
    pub rate_limit_signals: &'a [RateLimitSignal],
    pub auth_cooldown_ms: u64,
    /// `null` when unlimited.
    pub rpm: Option<u32>,
    /// `null`: the deployment's `MAX_PARK_MS` caps every park.
    pub max_park_ms: Option<u64>,
    /// `null`: a 429 without a hint parks by the kind's rule.
    pub rate_limit_cooldown_ms: Option<u64>,
}

/// One key of a provider's pool as shown: never the key.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum KeyRef<'a> {
    /// A sealed key; `last4` is `null` for keys too short to show any of, and for keys shown
    /// by who they are: a Bedrock key by its `access_key_id`, a Vertex service account by its
    /// `client_email`.
    Sealed {
        id: &'a str,
        last4: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        access_key_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        client_email: Option<&'a str>,
        #[serde(flatten)]
        headroom: KeyHeadroom,
    },
    /// A key held in a Worker secret, by the secret's name.
    Secret {
        id: &'a str,
        secret: &'a str,
        #[serde(flatten)]
        headroom: KeyHeadroom,
    },
}

/// A key's remaining quota as the provider's GET shows it: the smallest share left over the
/// families its answers report (0 to 1; absent while no figure is live), and when its newest
/// figure was seen (epoch ms; absent if never).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Default, Serialize)]
pub struct KeyHeadroom {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom_seen_ms: Option<u64>,
}

impl ProviderView<'_> {
    /// The view with each key's headroom from the routing object's figures at `now`.
    pub fn with_headroom(mut self, figures: &Headrooms, now: u64) -> Self {
        for key in &mut self.keys {
            let (KeyRef::Sealed { id, headroom, .. } | KeyRef::Secret { id, headroom, .. }) = key;
            *headroom = KeyHeadroom {
                headroom: figures.headroom(id, now),
                headroom_seen_ms: figures.seen(id),
            };
        }
        self
    }
}

impl<'a> From<&'a StoredProvider> for ProviderView<'a> {
    fn from(p: &'a StoredProvider) -> Self {
        let keys = p
            .keys
            .iter()
            .map(|k| match k {
                StoredKey::Sealed {
                    id, last4, account, ..
                } => {
                    let account = account.as_deref();
                    let bedrock = p.kind == ProviderKind::Bedrock;
                    KeyRef::Sealed {
                        id,
                        last4: last4.as_deref(),
                        access_key_id: account.filter(|_| bedrock),
                        client_email: account.filter(|_| !bedrock),
                        headroom: KeyHeadroom::default(),
                    }
                }
                StoredKey::Secret { id, secret_name } => KeyRef::Secret {
                    id,
                    secret: secret_name,
                    headroom: KeyHeadroom::default(),
                },
            })
            .collect();
        Self {
            name: &p.name,
            kind: p.kind,
            base_url: p.base_url.as_str(),
            platform: p.platform(),
            api_version: p.cloud.api_version.as_deref(),
            region: p.cloud.region.as_deref(),
            project: p.cloud.project.as_deref(),
            publisher: p.cloud.publisher,
            keys,
            key_strategy: p.key_strategy,
            timeout_ms: p.timeout_ms,
            retry: p.resilience.retry,
            rate_limit_signals: &p.resilience.rate_limit_signals,
            auth_cooldown_ms: p.resilience.auth_cooldown_ms,
            rpm: p.resilience.rpm,
            max_park_ms: p.resilience.max_park_ms,
            rate_limit_cooldown_ms: p.resilience.rate_limit_cooldown_ms,
        }
    }
}

/// A catalog model.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct ModelView<'a> {
    pub id: &'a ModelId,
    pub provider: &'a ProviderName,
    pub upstream_model: &'a str,
    pub capabilities: &'a CapabilitySet,
    pub context_window: u32,
    pub input_price_per_mtok: f64,
    pub output_price_per_mtok: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_input_price_per_mtok: Option<f64>,
    /// Absent when unset (then 1.25× input): what was set, never the derived default, so a
    /// GET put back unchanged keeps following the input price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_price_per_mtok: Option<f64>,
    /// Absent when unset (then 2× input).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_1h_price_per_mtok: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The model tried when this one fails over; absent when it has no link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<&'a ModelId>,
    /// Present whenever `fallback_model` is: `true` while the tenant has no model of that id
    /// (the link is dead and ends the chain there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_model_missing: Option<bool>,
    pub min_cache_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality_rank: Option<u32>,
}

impl<'a> ModelView<'a> {
    /// The model, its link judged by `exists` (whether the tenant has a model of that id).
    pub fn new(m: &'a CatalogModel, exists: impl Fn(&ModelId) -> bool) -> Self {
        Self {
            id: &m.id,
            provider: &m.provider,
            upstream_model: &m.upstream_model,
            capabilities: &m.capabilities,
            context_window: m.context_window,
            input_price_per_mtok: m.input_price_per_mtok,
            output_price_per_mtok: m.output_price_per_mtok,
            cached_input_price_per_mtok: m.cached_input_price_per_mtok,
            cache_write_price_per_mtok: m.cache_write_price_per_mtok,
            cache_write_1h_price_per_mtok: m.cache_write_1h_price_per_mtok,
            max_output_tokens: m.max_output_tokens,
            fallback_model: m.fallback_model.as_ref(),
            fallback_model_missing: m.fallback_model.as_ref().map(|l| !exists(l)),
            min_cache_tokens: m.min_cache_tokens,
            quality_rank: m.quality_rank,
        }
    }
}

/// An alias with its name.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct AliasView<'a> {
    pub name: &'a AliasName,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<&'a ModelId>,
    pub capabilities: &'a CapabilitySet,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_context_window: Option<u32>,
    pub provider_preference: &'a [ProviderName],
    pub cost_tier: CostTier,
    /// Absent: `price`, the spec's resolution.
    #[serde(skip_serializing_if = "RankBy::is_price")]
    pub rank_by: RankBy,
    /// Present when set (the default blend is used otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Weights>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_affinity_s: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_ttl_s: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prefer_newest_version: bool,
    #[serde(skip_serializing_if = "OnRefusal::is_answer")]
    pub on_refusal: OnRefusal,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefer_platforms: Option<&'a PlatformOrder>,
}

impl<'a> AliasView<'a> {
    pub fn new(name: &'a AliasName, a: &'a Alias) -> Self {
        Self {
            name,
            pin: a.pin.as_ref(),
            capabilities: &a.capabilities,
            min_context_window: a.min_context_window,
            provider_preference: &a.provider_preference,
            cost_tier: a.cost_tier,
            rank_by: a.rank_by,
            weights: a.weights,
            cache_affinity_s: a.cache_affinity_s,
            cache_ttl_s: a.cache_ttl_s,
            prefer_newest_version: a.prefer_newest_version,
            on_refusal: a.on_refusal,
            prompt_cache: a.prompt_cache,
            prefer_platforms: a.prefer_platforms.as_ref(),
        }
    }
}

/// A routing rule as listed: its name (its match when written without one), match,
/// priority, `when` as written (absent when it has none), chain and options.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct RuleView<'a> {
    pub name: &'a RouteName,
    #[serde(rename = "match")]
    pub matches: &'a RouteName,
    pub priority: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<&'a serde_json::Map<String, serde_json::Value>>,
    pub chain: &'a Chain,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_affinity_s: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_ttl_s: Option<u32>,
    #[serde(skip_serializing_if = "OnRefusal::is_answer")]
    pub on_refusal: OnRefusal,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefer_platforms: Option<&'a PlatformOrder>,
}

impl<'a> RuleView<'a> {
    pub fn new(rule: &'a Rule) -> Self {
        Self {
            name: &rule.name,
            matches: &rule.matches,
            priority: rule.priority,
            when: rule.when.as_ref().map(When::json),
            chain: &rule.chain,
            cache_affinity_s: rule.chain.cache_affinity_s(),
            cache_ttl_s: rule.chain.cache_ttl_s(),
            on_refusal: rule.chain.on_refusal(),
            prompt_cache: rule.chain.prompt_cache(),
            prefer_platforms: rule.chain.prefer_platforms(),
        }
    }
}

/// A routing rule as just written: with the chain entries that cannot serve today (a warning,
/// not a refusal: the catalog may catch up).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct WrittenRuleView<'a> {
    pub name: &'a RouteName,
    #[serde(rename = "match")]
    pub matches: &'a RouteName,
    pub priority: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<&'a serde_json::Map<String, serde_json::Value>>,
    pub chain: &'a Chain,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_affinity_s: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_ttl_s: Option<u32>,
    #[serde(skip_serializing_if = "OnRefusal::is_answer")]
    pub on_refusal: OnRefusal,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefer_platforms: Option<&'a PlatformOrder>,
    pub warnings: Vec<String>,
}

impl<'a> WrittenRuleView<'a> {
    pub fn new(rule: &'a Rule, warnings: Vec<String>) -> Self {
        let v = RuleView::new(rule);
        Self {
            name: v.name,
            matches: v.matches,
            priority: v.priority,
            when: v.when,
            chain: v.chain,
            cache_affinity_s: v.cache_affinity_s,
            cache_ttl_s: v.cache_ttl_s,
            on_refusal: v.on_refusal,
            prompt_cache: v.prompt_cache,
            prefer_platforms: v.prefer_platforms,
            warnings,
        }
    }
}
