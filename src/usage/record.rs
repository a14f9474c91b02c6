//! The one record per caller request that crosses from the request path to the ledger.

use crate::config::{ModelId, ProviderName, TenantId};
use serde::{Deserialize, Serialize};

/// Tokens as the serving upstream reported them. `cached` is the part of `prompt` served from
/// the provider's prompt cache (OpenAI `prompt_tokens_details.cached_tokens`, Anthropic
/// `cache_read_input_tokens`); `cache_write` and `cache_write_1h` the parts written to it with
/// the 5-minute and the 1-hour TTL (Anthropic `cache_creation`, Bedrock `cacheDetails`; a write
/// without a TTL breakdown is a 5-minute one). Each is charged at its own price (`usage::cost`).
///
/// The writes are kept in stored values (settled ids, records in flight) and absent when zero,
/// so a value stored before they existed reads as no writes, and one without writes is stored
/// as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenCounts {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_1h: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TokenCounts {
    /// Counts without cache writes.
    pub const fn new(prompt: u64, completion: u64, cached: u64) -> Self {
        Self {
            prompt,
            completion,
            cached,
            cache_write: 0,
            cache_write_1h: 0,
        }
    }

    /// These counts with `cache_write` 5-minute and `cache_write_1h` 1-hour cache writes (parts
    /// of `prompt`).
    pub const fn with_writes(self, cache_write: u64, cache_write_1h: u64) -> Self {
        Self {
            cache_write,
            cache_write_1h,
            ..self
        }
    }

    /// Every cache write, whatever its TTL.
    pub fn cache_writes(&self) -> u64 {
        self.cache_write.saturating_add(self.cache_write_1h)
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
        .with_writes(
            f(self.cache_write, other.cache_write),
            f(self.cache_write_1h, other.cache_write_1h),
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
    /// What the provider's prompt cache saved this answer, net of what its writes cost above
    /// the input price (`usage::cost::cache_savings_usd`); negative when the writes cost more
    /// than the reads saved. Absent when the answer neither read nor wrote the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_savings_usd: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_count_stored_before_cache_writes_reads_as_none_and_one_without_writes_stores_as_before(
    ) {
        let old: TokenCounts =
            serde_json::from_str(r#"{"prompt":5,"completion":7,"cached":2}"#).unwrap();
        assert_eq!(old, TokenCounts::new(5, 7, 2));
        assert_eq!(old.cache_writes(), 0);
        assert_eq!(
            serde_json::to_string(&old).unwrap(),
            r#"{"prompt":5,"completion":7,"cached":2}"#
        );
        let written = TokenCounts::new(305, 7, 0).with_writes(100, 200);
        let json = serde_json::to_string(&written).unwrap();
        assert_eq!(
            json,
            r#"{"prompt":305,"completion":7,"cached":0,"cache_write":100,"cache_write_1h":200}"#
        );
        assert_eq!(serde_json::from_str::<TokenCounts>(&json).unwrap(), written);
    }

    #[test]
    fn a_usage_record_stored_before_cache_savings_reads_without_them() {
        let stored = r#"{"at_ms":1,"tenant":"t","key_id":"k","end_user":null,"requested":"m",
            "served_model":"m","provider":"p","tokens":{"prompt":5,"completion":7,"cached":2},
            "cost_usd":0.1,"outcome":"served"}"#;
        let r: UsageRecord = serde_json::from_str(stored).unwrap();
        assert_eq!(r.tokens, Some(TokenCounts::new(5, 7, 2)));
        assert_eq!(r.cache_savings_usd, None);
    }

    #[test]
    fn token_counts_combine_their_writes_like_every_other_count() {
        let a = TokenCounts::new(10, 1, 2).with_writes(3, 4);
        let b = TokenCounts::new(1, 1, 1).with_writes(1, 5);
        assert_eq!(
            a.zip(b, u64::saturating_sub),
            TokenCounts::new(9, 0, 1).with_writes(2, 0)
        );
    }
}
