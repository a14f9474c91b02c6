//! The sums of a group of requests' usage: what the ledger rolls up, D1 stores and the usage API
//! answers with. The wire shape lives with the API; how one record becomes sums is `usage`'s.

use serde::{Deserialize, Serialize};

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageSums {
    pub requests: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    /// Requests answered from the response cache, and what they saved.
    #[serde(default)]
    pub cache_hits: u64,
    #[serde(default)]
    pub saved_usd: f64,
    /// Prompt tokens written to the provider's prompt cache (5-minute and 1-hour writes), and
    /// what the prompt cache saved net of the writes' premium (`usage::cost::cache_savings_usd`;
    /// negative when writes cost more than reads saved). `cached_tokens` are the reads.
    #[serde(default)]
    pub cache_write_tokens: u64,
    #[serde(default)]
    pub cache_savings_usd: f64,
}

impl UsageSums {
    pub fn add(&mut self, o: &UsageSums) {
        self.requests = self.requests.saturating_add(o.requests);
        self.prompt_tokens = self.prompt_tokens.saturating_add(o.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(o.completion_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(o.cached_tokens);
        self.cost_usd += o.cost_usd;
        self.cache_hits = self.cache_hits.saturating_add(o.cache_hits);
        self.saved_usd += o.saved_usd;
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(o.cache_write_tokens);
        self.cache_savings_usd += o.cache_savings_usd;
    }
}
