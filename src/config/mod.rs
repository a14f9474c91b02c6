//! Validated tenant configuration. Admin input is parsed into these types once; past the admin
//! handler an invalid alias, an empty key pool or an over-long chain cannot exist.

pub mod admin_body;
pub mod alerts;
pub mod alias;
pub mod base64;
pub mod base_url;
mod body_reader;
pub mod caller_key;
pub mod capabilities;
pub mod chain_entry;
pub mod chain_preset;
pub mod cloud;
pub mod cloud_key;
pub mod condition;
pub mod condition_field;
pub mod condition_pattern;
pub mod config_rows;
pub mod degraded;
pub mod key_id;
pub mod local_host;
pub mod model;
pub mod names;
pub mod non_empty;
pub mod on_refusal;
pub mod open_durations;
pub mod otel;
pub mod period;
pub mod platform_order;
pub mod policy;
pub mod prompt_cache;
pub mod provider;
pub mod provider_body;
pub mod provider_key;
pub mod resilience;
pub mod response_cache;
pub mod restriction;
pub mod rule;
pub mod rule_set;
pub mod sealed;
pub mod settings;
mod settings_body;
pub mod sort;
pub mod sorted_map;
pub mod sorted_set;
pub mod strict_json;
#[cfg(test)]
mod strict_json_paths;
pub mod tenant;
pub mod tenant_table;
pub mod text;

pub use alias::{Alias, CostTier};
pub use caller_key::CallerKey;
pub use capabilities::CapabilitySet;
pub use chain_entry::{ChainEntry, SpreadMember};
pub use key_id::KeyId;
pub use model::CatalogModel;
pub use names::{AliasName, Capability, ModelId, NameError, ProviderName, RouteName, TenantId};
pub use non_empty::NonEmpty;
pub use on_refusal::OnRefusal;
pub use period::Period;
pub use platform_order::PlatformOrder;
pub use policy::{Budget, EndUserLimits, KeyPolicy, KeyPolicyChange};
pub use prompt_cache::{CacheTtl, PromptCache};
pub use provider::{
    BaseUrl, Cloud, KeyStrategy, NewKey, NewProvider, Platform, Provider, ProviderKey,
    ProviderKind, ProviderSpec, Publisher, StoredKey, StoredProvider,
};
pub use resilience::{RateLimitSignal, Resilience, RetryPolicy};
pub use rule::{Chain, Rule};
pub use rule_set::RuleSet;
pub use settings::{BreakerSettings, Defaults, OpenDurations, Settings, SettingsOverrides};
pub use sorted_map::SortedMap;
pub use sorted_set::SortedSet;
pub use tenant::TenantConfig;

/// Why admin input was refused; every message names the field or limit involved.
#[derive(Debug, Clone, PartialEq, Eq, displaydoc::Display)]
pub enum ConfigError {
    /// {field}: {reason}
    Invalid { field: String, reason: String },
    /// chain has {len} entries but routing.max_fallback_depth allows at most {max}
    ChainTooLong { len: usize, max: u32 },
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    pub fn invalid(field: &str, reason: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.to_owned(),
            reason: reason.into(),
        }
    }

    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Invalid { field, .. } => Some(field),
            Self::ChainTooLong { .. } => Some("chain"),
        }
    }
}
