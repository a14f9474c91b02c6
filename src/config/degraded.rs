//! `degraded` settings: below `healthy_ratio` of usable
//! providers for `entry_grace_ms` a tenant is degraded; it leaves after `exit_grace_ms` at or
//! above the ratio. A tenant with fewer than `min_providers` providers is never degraded.

use super::ConfigError;
use serde::{Deserialize, Serialize};

/// The values as a tenant writes them; every absent one takes its default.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DegradedOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_grace_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_grace_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_providers: Option<u32>,
}

/// What the scheduled pass decides with.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DegradedSettings {
    pub healthy_ratio: f64,
    pub entry_grace_ms: u64,
    pub exit_grace_ms: u64,
    pub min_providers: u32,
}

impl Default for DegradedSettings {
    fn default() -> Self {
        Self {
            healthy_ratio: 0.5,
            entry_grace_ms: 60_000,
            exit_grace_ms: 120_000,
            min_providers: 3,
        }
    }
}

impl DegradedSettings {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    pub fn with(self, o: &DegradedOverrides) -> Self {
        Self {
            healthy_ratio: o.healthy_ratio.unwrap_or(self.healthy_ratio),
            entry_grace_ms: o.entry_grace_ms.unwrap_or(self.entry_grace_ms),
            exit_grace_ms: o.exit_grace_ms.unwrap_or(self.exit_grace_ms),
            min_providers: o.min_providers.unwrap_or(self.min_providers),
        }
    }
}

/// The longest grace (a day): past it a tenant would stay degraded longer than any alert retries.
pub const MAX_GRACE_MS: u64 = 86_400_000;

impl DegradedOverrides {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self
            .healthy_ratio
            .is_some_and(|r| !(r.is_finite() && (0.0..=1.0).contains(&r)))
        {
            return Err(ConfigError::invalid(
                "degraded.healthy_ratio",
                "must be a number from 0 to 1",
            ));
        }
        for (field, v) in [
            ("degraded.entry_grace_ms", self.entry_grace_ms),
            ("degraded.exit_grace_ms", self.exit_grace_ms),
        ] {
            if v.is_some_and(|ms| ms > MAX_GRACE_MS) {
                return Err(ConfigError::invalid(
                    field,
                    format!("must be 0 to {MAX_GRACE_MS}"),
                ));
            }
        }
        if self.min_providers.is_some_and(|n| !(1..=1000).contains(&n)) {
            return Err(ConfigError::invalid(
                "degraded.min_providers",
                "must be 1 to 1000",
            ));
        }
        Ok(())
    }
}
