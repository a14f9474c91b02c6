//! The one record per caller request that crosses from the request path to the ledger.

use crate::config::{ModelId, ProviderName, TenantId};
use serde::{Deserialize, Serialize};

/// Tokens as the serving upstream reported them. `cached` is the part of `prompt` served from
/// the provider's prompt cache (OpenAI `prompt_tokens_details.cached_tokens`, Anthropic
/// `cache_read_input_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenCounts {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
}

impl TokenCounts {
    pub fn new(prompt: u64, completion: u64, cached: u64) -> Self {
        Self {
            prompt,
            completion,
            cached,
        }
    }

    pub fn total(&self) -> u64 {
        self.prompt.saturating_add(self.completion)
    }

    /// Each count combined with `other`'s by `f` (sum, difference, larger of the two).
    pub fn zip(self, other: Self, f: impl Fn(u64, u64) -> u64) -> Self {
        Self::new(
            f(self.prompt, other.prompt),
            f(self.completion, other.completion),
            f(self.cached, other.cached),
        )
    }
}

/// How the request ended, as far as usage is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// An upstream answered (the whole answer, or a stream that ran to its end or was cut
    /// after the first byte).
    Served,
    /// Every candidate failed (`upstream_exhausted`): a request with zero cost.
    Exhausted,
}

/// Where a record's tokens come from: the upstream's own `usage`, or the gateway's estimate
/// (`usage::estimate`) when the upstream reported none (a stream cut before its usage event, an
/// answer without `usage`, an error after billed bytes). Estimates are charged like reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageSource {
    #[default]
    Reported,
    Estimated,
}

/// One caller request, after its answer. A served request always has `tokens` and `cost_usd`,
/// reported or estimated (`usage_source`); an exhausted one has unknown tokens and zero cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageRecord {
    pub at_ms: u64,
    /// The gateway's request id (`X-CogniGate-Request-Id`): the ledger settles a request once,
    /// and a later record of the same request (a late usage report) settles the difference.
    #[serde(default)]
    pub request_id: String,
    pub tenant: TenantId,
    /// The caller key's id (`key_...`), never the key.
    pub key_id: String,
    /// `X-CogniGate-User`, else the request's `user` field.
    pub end_user: Option<String>,
    /// The model name as the caller sent it (model id, alias or rule name).
    pub requested: String,
    /// The model and provider that served the answer; `None` when nothing did.
    pub served_model: Option<ModelId>,
    pub provider: Option<ProviderName>,
    pub tokens: Option<TokenCounts>,
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub usage_source: UsageSource,
    /// The tenant generation whose config served the request (`usage::generation`): usage of a
    /// deleted tenant never lands in one created again under the same id. 0: created before
    /// generations were kept.
    #[serde(default)]
    pub generation: u64,
    pub outcome: Outcome,
    /// Answered from the response cache (no upstream call, cost 0).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_hit: bool,
    /// What a cache hit saved: the original answer's cost at its serving model's prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_usd: Option<f64>,
}
