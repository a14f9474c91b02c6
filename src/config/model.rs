//! A catalog entry: one model a tenant can route to, on one of its providers.

use super::capabilities::CapabilitySet;
use super::names::{Capability, ModelId, ProviderName};
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
