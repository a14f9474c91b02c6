//! Degraded mode for one tenant, decided once per scheduled pass with time passed in.
//! Below `healthy_ratio` of usable providers for `entry_grace_ms` the tenant is degraded; at or
//! above it for `exit_grace_ms` it recovers. Graces are measured across passes: the state keeps
//! when the current run began. A tenant with fewer than `min_providers` providers is never
//! degraded (one provider down of two is not the tenant's whole estate in trouble).

use crate::config::settings::DegradedSettings;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum DegradedMode {
    #[default]
    Healthy,
    /// Below the ratio since `since`, not yet for the entry grace.
    Entering { since: u64 },
    /// Degraded since `since`.
    Degraded { since: u64 },
    /// Degraded since `degraded_since`, at or above the ratio again since `since`.
    Leaving { since: u64, degraded_since: u64 },
}

/// A move in or out of degraded mode: the `tenant.degraded` / `tenant.recovered` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event")]
pub enum DegradedTransition {
    #[serde(rename = "tenant.degraded")]
    Degraded { since: u64 },
    #[serde(rename = "tenant.recovered")]
    Recovered { degraded_since: u64 },
}

impl DegradedTransition {
    /// When the degraded run this transition starts or ends began.
    pub fn degraded_since(&self) -> u64 {
        match *self {
            Self::Degraded { since } => since,
            Self::Recovered { degraded_since } => degraded_since,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Self::Degraded { .. } => "tenant.degraded",
            Self::Recovered { .. } => "tenant.recovered",
        }
    }
}

/// What one pass saw: providers with at least one usable model, and all providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderCount {
    pub healthy: u32,
    pub total: u32,
}

impl ProviderCount {
    fn below(&self, s: &DegradedSettings) -> bool {
        self.total >= s.min_providers
            && f64::from(self.healthy) < s.healthy_ratio * f64::from(self.total)
    }
}

/// Whether a provider has at least one usable model: a catalog model whose breaker is closed
/// (not among `not_closed`), and a key that is not parked.
pub fn provider_usable<'m>(
    mut models: impl Iterator<Item = &'m str>,
    not_closed: &[&str],
    keys: usize,
    parked: usize,
) -> bool {
    parked < keys && models.any(|m| !not_closed.contains(&m))
}

impl DegradedMode {
    /// When the tenant became degraded, while it is (`/v1/health`'s `degraded.since`).
    pub fn since(&self) -> Option<u64> {
        match *self {
            Self::Degraded { since }
            | Self::Leaving {
                degraded_since: since,
                ..
            } => Some(since),
            Self::Healthy | Self::Entering { .. } => None,
        }
    }

    pub fn is_degraded(&self) -> bool {
        self.since().is_some()
    }

    /// One pass: the next state and the transition it makes, if any.
    pub fn pass(
        self,
        count: ProviderCount,
        s: &DegradedSettings,
        now: u64,
    ) -> (Self, Option<DegradedTransition>) {
        let below = count.below(s);
        let lasted = |since: u64, grace: u64| now.saturating_sub(since) >= grace;
        match (self, below) {
            (Self::Healthy, false) | (Self::Entering { .. }, false) => (Self::Healthy, None),
            (Self::Healthy, true) => Self::Entering { since: now }.pass(count, s, now),
            (Self::Entering { since }, true) if lasted(since, s.entry_grace_ms) => (
                Self::Degraded { since: now },
                Some(DegradedTransition::Degraded { since: now }),
            ),
            (Self::Entering { .. }, true) | (Self::Degraded { .. }, true) => (self, None),
            (Self::Degraded { since }, false) => Self::Leaving {
                since: now,
                degraded_since: since,
            }
            .pass(count, s, now),
            (Self::Leaving { degraded_since, .. }, true) => (
                Self::Degraded {
                    since: degraded_since,
                },
                None,
            ),
            (
                Self::Leaving {
                    since,
                    degraded_since,
                },
                false,
            ) if lasted(since, s.exit_grace_ms) || count.total < s.min_providers => (
                Self::Healthy,
                Some(DegradedTransition::Recovered { degraded_since }),
            ),
            (Self::Leaving { .. }, false) => (self, None),
        }
    }
}

#[cfg(test)]
#[path = "degraded_tests.rs"]
mod tests;
