//! An alias is a constraint, not a pin: it keeps meaning the same thing as catalogs change.

use super::capabilities::CapabilitySet;
use super::names::{AliasName, Capability, ModelId, ProviderName};
use serde::{Deserialize, Serialize};

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostTier {
    Cheapest,
    #[default]
    Balanced,
    Best,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Alias {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<ModelId>,
    #[serde(default)]
    pub capabilities: CapabilitySet,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_context_window: Option<u32>,
    #[serde(default)]
    pub provider_preference: Vec<ProviderName>,
    #[serde(default)]
    pub cost_tier: CostTier,
    /// Prompt-cache affinity in seconds (issue 22, the `spread` part); `None` is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_affinity_s: Option<u32>,
}

/// The four aliases every tenant is created with.
pub fn default_aliases() -> Vec<(AliasName, Alias)> {
    let chat = || {
        Capability::parse("chat")
            .ok()
            .into_iter()
            .collect::<Vec<_>>()
    };
    let alias = |min_context_window, cost_tier| Alias {
        capabilities: chat().into(),
        min_context_window,
        cost_tier,
        ..Alias::default()
    };
    [
        ("fast", alias(None, CostTier::Cheapest)),
        ("balanced", alias(Some(32_000), CostTier::Balanced)),
        ("best", alias(None, CostTier::Best)),
        ("long", alias(Some(128_000), CostTier::Balanced)),
    ]
    .into_iter()
    .filter_map(|(name, a)| AliasName::parse(name).ok().map(|n| (n, a)))
    .collect()
}
