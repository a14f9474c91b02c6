//! What the response cache keeps beside an answer's bytes, and which answers it keeps.
//!
//! - Only a 200 answer is stored, never an error or a refusal, and never one over
//!   `MAX_ENTRY_BYTES` (1 MiB: the Cache API and KV both hold more, but a cache of huge answers
//!   spends the isolate's memory on every hit).
//! - The bytes are the answer in the caller surface's non-streamed form, so a hit of either kind
//!   (streamed or not) is built from them.
//! - The entry carries its own expiry: both stores may keep an entry past its TTL (KV's shortest
//!   TTL is 60 s), and a stale entry never answers.

use crate::config::{Platform, TenantConfig};
use serde::{Deserialize, Serialize};

pub const MAX_ENTRY_BYTES: usize = 1 << 20;

/// An entry's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMeta {
    /// The model and provider that served the original answer (`X-CogniGate-Model`, `-Provider`).
    pub model: String,
    pub provider: String,
    pub content_type: String,
    pub stored_at_ms: u64,
    pub expires_at_ms: u64,
    /// What the original answer cost at its serving model's prices: what each hit saves.
    pub cost_usd: f64,
    /// `X-CogniGate-Fallback-Depth` of the original answer.
    #[serde(default)]
    pub depth: usize,
    /// The platform of the provider that produced it (`direct`, `bedrock`, ...), so a request
    /// under a data restriction takes only an answer produced inside it. Absent in entries
    /// stored before it was kept: those serve no restricted request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
}

impl StoredMeta {
    pub fn fresh(&self, now_ms: u64) -> bool {
        now_ms < self.expires_at_ms
    }

    /// `Age`, in whole seconds since the answer was stored.
    pub fn age_s(&self, now_ms: u64) -> u64 {
        now_ms.saturating_sub(self.stored_at_ms) / 1_000
    }
}

/// Whether a stored answer may serve a request matching the data restrictions `applied`
/// (`routing::restriction`): with none, any; else only one whose provider and platform, as it
/// was produced, lie inside every one of them. An entry that does not say its platform is
/// outside.
pub fn produced_inside(meta: &StoredMeta, cfg: &TenantConfig, applied: &[usize]) -> bool {
    if applied.is_empty() {
        return true;
    }
    let Some(platform) = meta.platform.as_deref().and_then(Platform::parse) else {
        return false;
    };
    crate::routing::restriction::inside(cfg, applied, &meta.provider, platform)
}

/// Whether an answer may be stored: a 200 that is no refusal, within the size limit.
pub fn storable(status: u16, refused: bool, len: usize) -> bool {
    status == 200 && !refused && len <= MAX_ENTRY_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_200_answers_that_are_no_refusal_and_at_most_1_mib_are_stored() {
        assert!(storable(200, false, MAX_ENTRY_BYTES));
        assert!(!storable(200, false, MAX_ENTRY_BYTES + 1));
        assert!(!storable(200, true, 10));
        for status in [201, 400, 429, 500, 502] {
            assert!(!storable(status, false, 10));
        }
    }

    #[test]
    fn a_cached_answer_serves_a_restricted_request_only_if_produced_inside_the_restriction() {
        use crate::config::restriction::Restriction;
        let mut cfg = crate::routing::test_config::cfg();
        let pii = serde_json::json!({"when": {"metadata.data_class": "pii"},
            "allowed_platforms": ["bedrock"]});
        cfg.settings.restrictions = vec![Restriction::parse(&pii, 0).unwrap()];
        let entry = |platform: Option<&str>| StoredMeta {
            model: "m".into(),
            provider: "openai".into(),
            content_type: "application/json".into(),
            stored_at_ms: 0,
            expires_at_ms: 1,
            cost_usd: 0.0,
            depth: 0,
            platform: platform.map(str::to_owned),
        };
        assert!(produced_inside(&entry(Some("bedrock")), &cfg, &[0]));
        assert!(!produced_inside(&entry(Some("direct")), &cfg, &[0]));
        assert!(
            !produced_inside(&entry(None), &cfg, &[0]),
            "an entry that does not say where it was produced is outside"
        );
        assert!(produced_inside(&entry(Some("direct")), &cfg, &[]));
        assert!(produced_inside(&entry(None), &cfg, &[]));
    }

    #[test]
    fn an_entry_past_its_expiry_never_answers_and_age_counts_from_its_store() {
        let m = StoredMeta {
            model: "m".into(),
            provider: "p".into(),
            content_type: "application/json".into(),
            stored_at_ms: 10_000,
            expires_at_ms: 70_000,
            cost_usd: 0.5,
            depth: 0,
            platform: None,
        };
        assert!(m.fresh(69_999));
        assert!(!m.fresh(70_000));
        assert_eq!(m.age_s(12_999), 2);
        assert_eq!(m.age_s(5), 0);
    }
}
