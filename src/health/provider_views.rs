//! What the routing object shows of its state without changing it: the breakers that are not
//! closed (`/v1/health`), and the scheduled pass's view of the provider, which
//! `/v1/providers/health` reads too.

use super::{Breaker, ProviderState};
use crate::config::ModelId;
use crate::health::probe_record::ProbeRecord;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerStatus {
    Open,
    HalfOpen,
}

/// A breaker that is not closed, as `/v1/health` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakerView {
    pub model: ModelId,
    pub state: BreakerStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker_until: Option<u64>,
}

/// A breaker's health view with the open duration in force (`open_ms`) while it is open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakerHealth {
    #[serde(flatten)]
    pub view: BreakerView,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_ms: Option<u64>,
}

/// What the scheduled pass and `/v1/providers/health` read of one provider: its breakers not
/// closed, how many of its keys are parked now, and its scheduled probes' record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassView {
    pub breakers: Vec<BreakerHealth>,
    pub parked: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes: Option<ProbeRecord>,
}

impl ProviderState {
    pub fn not_closed(&self, now: u64) -> Vec<BreakerView> {
        self.breakers
            .iter()
            .filter_map(|(model, b)| {
                let (state, breaker_until) = match *b {
                    Breaker::Closed { .. } => return None,
                    Breaker::Open { until } if now < until => (BreakerStatus::Open, Some(until)),
                    Breaker::Open { .. } | Breaker::HalfOpen { .. } => {
                        (BreakerStatus::HalfOpen, None)
                    }
                };
                Some(BreakerView {
                    model: model.clone(),
                    state,
                    breaker_until,
                })
            })
            .collect()
    }

    /// `not_closed` with the open duration in force on each open breaker (`/v1/health`).
    pub fn health(&self, now: u64) -> Vec<BreakerHealth> {
        self.not_closed(now)
            .into_iter()
            .map(|view| BreakerHealth {
                open_ms: (view.state == BreakerStatus::Open)
                    .then(|| self.escalation.get(&view.model).map(|e| e.open_ms))
                    .flatten(),
                view,
            })
            .collect()
    }

    /// The provider as the scheduled pass sees it at `now`.
    pub fn pass_view(&self, now: u64) -> PassView {
        PassView {
            breakers: self.health(now),
            parked: self.parked_count(now),
            probes: self.probes,
        }
    }
}
