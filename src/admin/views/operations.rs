//! Breaker events and manual resets.

use serde::{Deserialize, Serialize};

/// A breaker event as stored and listed (`breaker.opened` / `breaker.closed`).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventView {
    /// The events table's order; not part of the stored body.
    #[serde(default)]
    pub seq: u64,
    pub event: String,
    pub tenant: String,
    pub provider: String,
    pub model: String,
    pub reason: String,
    pub time: u64,
    /// The routing object's own order of its breakers' transitions (0 in events stored before
    /// it was recorded).
    #[serde(default)]
    pub transition_seq: u64,
    /// On `breaker.opened`: when the breaker half-opens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaker_until: Option<u64>,
    /// On `breaker.opened`: the open duration in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_ms: Option<u64>,
}

/// What a manual breaker reset closed.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct ResetView {
    pub closed: Vec<ClosedBreaker>,
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct ClosedBreaker {
    pub provider: String,
    pub model: String,
}
