//! The answer of `GET /admin/v1/tenants/{t}/explain`: a requested name's chain, each
//! candidate with the decision a request would meet now. Built by `admin::explain`; the reasons
//! are the cascade's (`cascade::precheck`), spelled as the issue names them.

pub use crate::cascade::precheck::SkipReason;
use crate::routing::ModelHealth;
use serde::Serialize;

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub model: String,
    /// `params.task` and `params.agent` as the dry run read them (the `task` and `agent` query
    /// parameters; absent, `unknown` and the task that agent implies).
    pub task: &'static str,
    pub agent: &'static str,
    /// The tenant's data restrictions this request matches: every candidate lies inside all of
    /// them. Empty when none applies.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        schemars(with = "Vec<AppliedRestriction>")
    )]
    pub restrictions: Vec<serde_json::Value>,
    pub candidates: Vec<CandidateView>,
}

/// A restriction that applies, as written, with its place in `settings.restrictions` (the
/// document's shape; the answer writes it as that JSON object).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AppliedRestriction {
    pub index: usize,
    #[serde(flatten)]
    pub restriction: crate::config::restriction::RestrictionBody,
}

/// `try`: a request would send to it (unless one before it serves); `skip`: never sent.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateDecision {
    Try,
    Skip,
}

impl CandidateDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Try => "try",
            Self::Skip => "skip",
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateView {
    /// The chain position (rule entry) it came from; for an `auto` strategy, its rank.
    pub position: usize,
    pub model: String,
    pub provider: String,
    pub decision: CandidateDecision,
    pub reason: Option<SkipReason>,
    /// Epoch ms when the reason ends, if known.
    pub until: Option<u64>,
    /// The breaker's end while it is open, as `/v1/health` shows it.
    pub breaker_until: Option<u64>,
    /// Where a ranking chose it: its score in the ranked set (0 to 1, higher is better).
    pub score: Option<f64>,
    pub stats: Option<LiveStats>,
    /// Why a position follows the model the name resolved to: `fallback_model` (the link of
    /// the position before it) or `tenant_fallback` (the tenant's setting); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<crate::routing::fallback_link::Via>,
    /// What a cost order ranks it by, per Mtok: input × (1 − `cached_share`) + cached input ×
    /// `cached_share` + output where the model has a cached price, else input + output.
    pub effective_price_per_mtok: f64,
    /// The share of its prompt tokens read from the provider's prompt cache that its order read
    /// (a price alias: as measured when the config was loaded; a ranking: now); `null` until
    /// measured or without a cached price.
    pub cached_share: Option<f64>,
}

/// The live stats behind a score (`routing::ModelHealth`).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveStats {
    pub requests: u64,
    pub successes: u64,
    pub failures: u64,
    pub success_rate: Option<f64>,
    pub latency_ms: Option<f64>,
    pub ttfb_ms: Option<f64>,
    pub breaker_open: bool,
    pub parked_share: f64,
    pub rpm_share: f64,
    /// The headroom of the provider's best key with a live figure (`null`: none has one).
    pub headroom: Option<f64>,
    /// What that headroom multiplies the score by (1 when at or above `headroom_threshold`, or
    /// where the factor does not apply).
    pub headroom_factor: f64,
}

impl From<ModelHealth> for LiveStats {
    fn from(h: ModelHealth) -> Self {
        Self {
            requests: h.requests,
            successes: h.successes,
            failures: h.failures,
            success_rate: h.success_rate,
            latency_ms: h.latency_ms,
            ttfb_ms: h.ttfb_ms,
            breaker_open: h.breaker_open,
            parked_share: h.parked_share,
            rpm_share: h.rpm_share,
            headroom: h.headroom,
            headroom_factor: 1.0,
        }
    }
}
