//! One circuit breaker (tenant / provider / model). Closed → traffic flows; open → skipped with zero
//! upstream calls; after `open_duration`, exactly one request probes while everyone else keeps
//! skipping. A good probe closes outright, a bad one re-opens for a full duration.

use super::safe_after;
use crate::config::BreakerSettings;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Breaker {
    /// Epoch-ms times of recent counted failures, oldest first.
    Closed {
        failures: Vec<u64>,
    },
    Open {
        until: u64,
    },
    /// `probe` identifies the one request let through; a probe that never reports is released at
    /// `probe_deadline` so the breaker cannot stick half-open.
    HalfOpen {
        probe: u64,
        probe_deadline: u64,
    },
}

impl Default for Breaker {
    fn default() -> Self {
        Self::Closed {
            failures: Vec::new(),
        }
    }
}

/// What the breaker says about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "admit", rename_all = "snake_case")]
pub enum Gate {
    Pass,
    /// Let through as the single half-open probe; report back with this token.
    Probe {
        token: u64,
    },
    /// Skip with zero upstream calls. `until` is set while open, absent while a probe is out.
    Skip {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<u64>,
    },
    /// Skip with zero upstream calls: the provider's `rpm` is used up until `until`.
    /// Decided before the breaker is asked, so it never takes or spends a probe.
    Limited {
        until: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event")]
pub enum Transition {
    #[serde(rename = "breaker.opened")]
    Opened { reason: String, breaker_until: u64 },
    #[serde(rename = "breaker.closed")]
    Closed { reason: String },
}

impl Breaker {
    pub fn admit(&mut self, now: u64, probe_timeout_ms: u64, token: u64) -> Gate {
        match *self {
            Self::Closed { .. } => Gate::Pass,
            Self::Open { until } if now < until => Gate::Skip { until: Some(until) },
            Self::HalfOpen { probe_deadline, .. } if now < probe_deadline => {
                Gate::Skip { until: None }
            }
            // Open and expired, or a probe that never reported: this request is the probe.
            Self::Open { .. } | Self::HalfOpen { .. } => {
                *self = Self::HalfOpen {
                    probe: token,
                    probe_deadline: safe_after(now, probe_timeout_ms),
                };
                Gate::Probe { token }
            }
        }
    }

    /// Whether `admit` would make the next request the probe (open and past its end, or a probe
    /// that never reported), without taking the slot.
    pub fn probe_due(&self, now: u64) -> bool {
        match *self {
            Self::Closed { .. } => false,
            Self::Open { until } => now >= until,
            Self::HalfOpen { probe_deadline, .. } => now >= probe_deadline,
        }
    }

    /// A counted failure (`server`, `timeout`, `network`, ...). Failures older than the window are
    /// dropped first, so a slow trickle never accumulates into a trip.
    pub fn failure(
        &mut self,
        now: u64,
        s: &BreakerSettings,
        probe: Option<u64>,
        reason: &str,
    ) -> Option<Transition> {
        match self {
            Self::Closed { failures } => {
                failures.retain(|t| now.saturating_sub(*t) < s.window_ms);
                failures.push(now);
                if failures.len() < s.error_threshold as usize {
                    return None;
                }
                Some(self.open(
                    now,
                    s,
                    format!(
                        "{} failures within {} ms, last: {reason}",
                        s.error_threshold, s.window_ms
                    ),
                ))
            }
            Self::HalfOpen { probe: p, .. } if probe == Some(*p) => {
                Some(self.open(now, s, format!("probe failed: {reason}")))
            }
            // A late report from a request admitted before the breaker opened changes nothing.
            Self::HalfOpen { .. } | Self::Open { .. } => None,
        }
    }

    /// Only the probe's success matters: it closes the breaker outright, window cleared.
    pub fn success(&mut self, probe: Option<u64>) -> Option<Transition> {
        match self {
            Self::HalfOpen { probe: p, .. } if probe == Some(*p) => {
                *self = Self::default();
                Some(Transition::Closed {
                    reason: "probe succeeded".to_owned(),
                })
            }
            _ => None,
        }
    }

    /// The probe ended without a verdict (client cancel, a request-caused 4xx, a rate-limited pool):
    /// the next request probes instead of waiting for the probe timeout.
    pub fn release(&mut self, probe: Option<u64>, now: u64) {
        if let Self::HalfOpen {
            probe: p,
            probe_deadline,
        } = self
        {
            if probe == Some(*p) {
                *probe_deadline = now;
            }
        }
    }

    /// A probe whose answer is still streaming renews its deadline: it is held for as long as
    /// its stream runs (each renewal reaches `now + ms`), and released by the deadline only if
    /// the renewals stop, e.g. because the isolate carrying it went away. Anything but the live
    /// probe is left alone, so a late renewal cannot revive a finished probe.
    pub fn hold(&mut self, probe: u64, now: u64, ms: u64) -> bool {
        match self {
            Self::HalfOpen {
                probe: p,
                probe_deadline,
            } if *p == probe && now < *probe_deadline => {
                let renewed = (*probe_deadline).max(safe_after(now, ms));
                let changed = renewed != *probe_deadline;
                *probe_deadline = renewed;
                changed
            }
            _ => false,
        }
    }

    /// Closed with no counted failure inside the window: what admission grants require. A
    /// failure that has aged out of the window no longer counts, here as for tripping.
    pub fn is_quiet(&self, now: u64, window_ms: u64) -> bool {
        match self {
            Self::Closed { failures } => {
                failures.iter().all(|t| now.saturating_sub(*t) >= window_ms)
            }
            Self::Open { .. } | Self::HalfOpen { .. } => false,
        }
    }

    /// Closing by hand; a breaker that is already closed emits nothing.
    pub fn reset(&mut self, reason: &str) -> Option<Transition> {
        let was_closed = matches!(self, Self::Closed { .. });
        *self = Self::default();
        (!was_closed).then(|| Transition::Closed {
            reason: reason.to_owned(),
        })
    }

    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed { .. })
    }

    fn open(&mut self, now: u64, s: &BreakerSettings, reason: String) -> Transition {
        let until = safe_after(now, s.open_duration_ms);
        *self = Self::Open { until };
        Transition::Opened {
            reason,
            breaker_until: until,
        }
    }
}

#[cfg(test)]
#[path = "breaker_tests.rs"]
mod tests;
