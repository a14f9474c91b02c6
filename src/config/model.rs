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
    /// The price of input tokens written to the provider's prompt cache with the 5-minute TTL
    /// (Anthropic's default write); without it `CACHE_WRITE_FACTOR` × input, the premium
    /// Anthropic and Bedrock charge. Kept in the stored spec, so older rows read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_price_per_mtok: Option<f64>,
    /// The price of input tokens written with the 1-hour TTL; without it
    /// `CACHE_WRITE_1H_FACTOR` × input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h_price_per_mtok: Option<f64>,
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
    /// The tenant's own quality order (1 is best), read by the `smartest` chain preset; older
    /// rows read as `None` (unranked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality_rank: Option<u32>,
}

/// `min_cache_tokens` when a model sets none: Anthropic's smallest published minimum.
pub const DEFAULT_MIN_CACHE_TOKENS: u32 = 1_024;

fn default_min_cache_tokens() -> u32 {
    DEFAULT_MIN_CACHE_TOKENS
}

/// `quality_rank` as written: absent is unranked; present, at least 1 (1 is best).
pub fn check_quality_rank(rank: Option<u32>) -> Result<Option<u32>, ConfigError> {
    match rank {
        Some(0) => Err(ConfigError::invalid(
            "quality_rank",
            "must be an integer of at least 1 (1 is best)",
        )),
        rank => Ok(rank),
    }
}

/// What a 5-minute cache write costs per input token's price when the model sets no price of
/// its own: Anthropic's published premium (1.25× the input price).
pub const CACHE_WRITE_FACTOR: f64 = 1.25;
/// What a 1-hour cache write costs per input token's price by default (2× the input price).
pub const CACHE_WRITE_1H_FACTOR: f64 = 2.0;

impl CatalogModel {
    /// The only quality signal that exists across providers: input plus output per Mtok.
    pub fn price(&self) -> f64 {
        self.input_price_per_mtok + self.output_price_per_mtok
    }

    /// What the cost order reads: input plus output per Mtok with the input priced as measured,
    /// `input × (1 − s) + cached × s + output`, where `s` is the share of prompt tokens read from
    /// the provider's prompt cache. `s` counts as 0 until measured (`None`) or where the model
    /// has no cached price, which is `price()` exactly, so no order moves before both exist.
    pub fn effective_price(&self, cached_share: Option<f64>) -> f64 {
        match (self.cached_input_price_per_mtok, cached_share) {
            (Some(cached), Some(s)) if s > 0.0 => {
                let s = s.min(1.0);
                self.input_price_per_mtok * (1.0 - s) + cached * s + self.output_price_per_mtok
            }
            _ => self.price(),
        }
    }

    /// USD per million cache reads: the cached input price, else the input price.
    pub fn cache_read_price(&self) -> f64 {
        self.cached_input_price_per_mtok
            .unwrap_or(self.input_price_per_mtok)
    }

    /// USD per million 5-minute cache writes: the model's own, else 1.25× input.
    pub fn cache_write_price(&self) -> f64 {
        self.cache_write_price_per_mtok
            .unwrap_or(self.input_price_per_mtok * CACHE_WRITE_FACTOR)
    }

    /// USD per million 1-hour cache writes: the model's own, else 2× input.
    pub fn cache_write_1h_price(&self) -> f64 {
        self.cache_write_1h_price_per_mtok
            .unwrap_or(self.input_price_per_mtok * CACHE_WRITE_1H_FACTOR)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn model(cached: Option<f64>) -> CatalogModel {
        let json = serde_json::json!({"id": "m", "provider": "p", "upstream_model": "m",
            "capabilities": ["chat"], "context_window": 8000, "input_price_per_mtok": 3.0,
            "output_price_per_mtok": 15.0, "cached_input_price_per_mtok": cached});
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_effective_price_is_input_times_one_minus_s_plus_cached_times_s_plus_output() {
        let m = model(Some(0.3));
        assert!((m.effective_price(Some(0.5)) - (1.5 + 0.15 + 15.0)).abs() < 1e-12);
        assert!((m.effective_price(Some(1.0)) - 15.3).abs() < 1e-12);
        assert!(
            (m.effective_price(Some(2.0)) - 15.3).abs() < 1e-12,
            "a share is at most 1"
        );
    }

    #[test]
    fn the_effective_price_is_the_list_price_until_measured_or_without_a_cached_price() {
        let m = model(Some(0.3));
        assert_eq!(m.effective_price(None), m.price());
        assert_eq!(m.effective_price(Some(0.0)), m.price());
        assert_eq!(model(None).effective_price(Some(0.9)), 18.0);
    }

    #[test]
    fn an_older_stored_model_reads_unranked() {
        assert_eq!(model(None).quality_rank, None);
    }
}
