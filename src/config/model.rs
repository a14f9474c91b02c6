//! A catalog entry: one model a tenant can route to, on one of its providers.

use super::capabilities::CapabilitySet;
use super::names::{Capability, ModelId, ProviderName};
use super::ConfigError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogModel {
    pub id: ModelId,
    pub provider: ProviderName,
    /// The name sent upstream; defaults to `id`.
    pub upstream_model: String,
    pub capabilities: CapabilitySet,
    pub context_window: u32,
    pub input_price_per_mtok: f64,
    pub output_price_per_mtok: f64,
    /// The price of input tokens read from the provider's prompt cache; without it they cost
    /// the input price. Kept in the stored spec, so older rows read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_price_per_mtok: Option<f64>,
    /// `max_tokens` for APIs that require one (Anthropic) when the request sets none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The model tried next when this one fails over (`routing::fallback_link`); never the
    /// model itself. Kept in the stored spec, so older rows read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<ModelId>,
    /// The shortest prefix (tokens) the provider caches: an injected prompt-cache mark whose
    /// prefix the gateway estimates shorter is left out (the provider would ignore it, and it
    /// takes one of the request's few mark slots). Older rows read as the default.
    #[serde(default = "default_min_cache_tokens")]
    pub min_cache_tokens: u32,
}

/// `min_cache_tokens` when a model sets none: Anthropic's smallest published minimum.
pub const DEFAULT_MIN_CACHE_TOKENS: u32 = 1_024;

fn default_min_cache_tokens() -> u32 {
    DEFAULT_MIN_CACHE_TOKENS
}

impl CatalogModel {
    /// The only quality signal that exists across providers: input plus output per Mtok.
    pub fn price(&self) -> f64 {
        self.input_price_per_mtok + self.output_price_per_mtok
    }

    pub fn has_capability(&self, wanted: &Capability) -> bool {
        self.capabilities.contains(wanted)
    }
}

/// A model's `fallback_model` as written: any id of the tenant, one that does not exist yet
/// included (a loop is written one model at a time), but never the model itself, which would be
/// a link that adds nothing.
pub fn other_model(id: &ModelId, link: Option<ModelId>) -> Result<Option<ModelId>, ConfigError> {
    if link.as_ref() == Some(id) {
        return Err(ConfigError::invalid(
            "fallback_model",
            "must name another model, not the model itself",
        ));
    }
    Ok(link)
}
