//! One circuit breaker (tenant / provider / model). Closed → traffic flows; open → skipped with zero
//! upstream calls; after `open_duration`, exactly one request probes while everyone else keeps
//! skipping. A good probe closes outright, a bad one re-opens for a full duration.

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
pub enum Admission {
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
    pub fn admit(&mut self, now: u64, probe_timeout_ms: u64, token: u64) -> Admission {
        match *self {
            Self::Closed { .. } => Admission::Pass,
            Self::Open { until } if now < until => Admission::Skip { until: Some(until) },
            Self::HalfOpen { probe_deadline, .. } if now < probe_deadline => {
                Admission::Skip { until: None }
            }
            // Open and expired, or a probe that never reported: this request is the probe.
            Self::Open { .. } | Self::HalfOpen { .. } => {
                *self = Self::HalfOpen {
                    probe: token,
                    probe_deadline: now.saturating_add(probe_timeout_ms),
                };
                Admission::Probe { token }
            }
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
        let until = now.saturating_add(s.open_duration_ms);
        *self = Self::Open { until };
        Transition::Opened {
            reason,
            breaker_until: until,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: BreakerSettings = BreakerSettings {
        error_threshold: 5,
        window_ms: 30_000,
        open_duration_ms: 60_000,
    };
    const PROBE_TIMEOUT: u64 = 10_000;

    fn fail(b: &mut Breaker, now: u64) -> Option<Transition> {
        b.failure(now, &S, None, "server")
    }

    fn opened_at(now: u64) -> Breaker {
        let mut b = Breaker::default();
        for i in 0..5 {
            fail(&mut b, now - 4 + i);
        }
        b
    }

    #[test]
    fn threshold_failures_inside_the_window_open_it() {
        let mut b = Breaker::default();
        for t in [0, 1_000, 2_000, 3_000] {
            assert_eq!(fail(&mut b, t), None);
        }
        let opened = fail(&mut b, 29_000);
        assert!(matches!(
            opened,
            Some(Transition::Opened {
                breaker_until: 89_000,
                ..
            })
        ));
        assert_eq!(b, Breaker::Open { until: 89_000 });
    }

    #[test]
    fn failures_spread_wider_than_the_window_never_open_it() {
        let mut b = Breaker::default();
        // One failure every 7.5 s: never five inside 30 s, for hours.
        for i in 0..2_000u64 {
            assert_eq!(fail(&mut b, i * 7_500), None);
        }
        assert!(b.is_closed());
    }

    #[test]
    fn open_skips_with_its_until() {
        let mut b = opened_at(1_000);
        assert_eq!(
            b.admit(30_000, PROBE_TIMEOUT, 1),
            Admission::Skip {
                until: Some(61_000)
            }
        );
    }

    #[test]
    fn half_open_admits_exactly_one_probe() {
        let mut b = opened_at(1_000);
        assert_eq!(
            b.admit(61_000, PROBE_TIMEOUT, 7),
            Admission::Probe { token: 7 }
        );
        for t in 0..20 {
            assert_eq!(
                b.admit(61_001 + t, PROBE_TIMEOUT, 8 + t),
                Admission::Skip { until: None }
            );
        }
    }

    #[test]
    fn probe_success_closes_outright_and_clears_the_window() {
        let mut b = opened_at(1_000);
        let Admission::Probe { token } = b.admit(61_000, PROBE_TIMEOUT, 7) else {
            panic!("expected a probe")
        };
        assert!(matches!(
            b.success(Some(token)),
            Some(Transition::Closed { .. })
        ));
        assert_eq!(b, Breaker::default());
        // Four fresh failures do not re-open it: nothing carried over.
        for t in 0..4 {
            assert_eq!(fail(&mut b, 61_100 + t), None);
        }
    }

    #[test]
    fn probe_failure_reopens_at_once_for_a_full_duration() {
        let mut b = opened_at(1_000);
        let Admission::Probe { token } = b.admit(61_000, PROBE_TIMEOUT, 7) else {
            panic!("expected a probe")
        };
        let t = b.failure(62_000, &S, Some(token), "timeout");
        assert!(matches!(
            t,
            Some(Transition::Opened {
                breaker_until: 122_000,
                ..
            })
        ));
        assert_eq!(
            b.admit(121_999, PROBE_TIMEOUT, 8),
            Admission::Skip {
                until: Some(122_000)
            }
        );
    }

    #[test]
    fn lost_probe_is_released_after_its_timeout() {
        let mut b = opened_at(1_000);
        assert_eq!(
            b.admit(61_000, PROBE_TIMEOUT, 7),
            Admission::Probe { token: 7 }
        );
        assert_eq!(
            b.admit(70_999, PROBE_TIMEOUT, 8),
            Admission::Skip { until: None }
        );
        assert_eq!(
            b.admit(71_000, PROBE_TIMEOUT, 9),
            Admission::Probe { token: 9 }
        );
        // The lost probe's late verdict no longer counts.
        assert_eq!(b.success(Some(7)), None);
    }

    #[test]
    fn released_probe_lets_the_next_request_probe() {
        let mut b = opened_at(1_000);
        b.admit(61_000, PROBE_TIMEOUT, 7);
        b.release(Some(7), 61_500);
        assert_eq!(
            b.admit(61_500, PROBE_TIMEOUT, 8),
            Admission::Probe { token: 8 }
        );
    }

    #[test]
    fn late_failure_from_a_non_probe_changes_nothing_while_open() {
        let mut b = opened_at(1_000);
        assert_eq!(fail(&mut b, 2_000), None);
        assert_eq!(b, Breaker::Open { until: 61_000 });
    }

    #[test]
    fn reset_closes_and_reports_only_real_transitions() {
        let mut b = opened_at(1_000);
        assert!(matches!(b.reset("manual"), Some(Transition::Closed { .. })));
        assert_eq!(b.reset("manual"), None);
    }
}
