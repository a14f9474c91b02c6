//! Everything the routing Durable Object of one tenant/provider holds, and the two messages it
//! answers: `acquire` before a candidate is tried (breaker admission + key order, one round trip)
//! and `report` after it (parks and the breaker verdict, sent only when it changes something).

use super::breaker::{Breaker, Gate, Transition};
use super::grant::{Grant, GRANT_BLOCK};
use super::key_pool::KeyPool;
use super::probe_record::{ProbeRecord, ScheduledProbe};
use super::request_rate::RequestRate;
use super::safe_after;
use crate::config::SortedMap;
use crate::config::{BreakerSettings, KeyId, KeyStrategy, ModelId};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderState {
    #[serde(default)]
    keys: KeyPool,
    /// Model id → breaker. A closed breaker with no recent failures is not stored.
    #[serde(default)]
    breakers: SortedMap<ModelId, Breaker>,
    #[serde(default)]
    next_token: u64,
    /// Numbers transitions, so their events can be ordered however late they are stored.
    #[serde(default)]
    transitions: u64,
    /// Model → the escalation of its breaker while not closed: which opening in a row
    /// it is and the duration in force. Absent in state stored before escalation existed.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    escalation: SortedMap<ModelId, Escalation>,
    /// `rpm`: when the admissions of the last minute were made. Not persisted, like the cursor:
    /// an evicted object forgets at most one minute of counting.
    #[serde(skip)]
    rate: RequestRate,
    /// The scheduled probes' record; absent until the first one reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    probes: Option<ProbeRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    /// 0 for the trip, +1 for each failed probe since.
    pub level: u32,
    pub open_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcquireRequest {
    pub model: ModelId,
    pub keys: Vec<KeyId>,
    pub strategy: KeyStrategy,
    /// How long a probe may stay out before another request may probe instead.
    pub probe_timeout_ms: u64,
    /// Above zero, a quiet candidate comes with a grant this long (`ROUTING_LEASE_MS`).
    #[serde(default)]
    pub lease_ms: u64,
    /// The breaker window: a failure older than this no longer keeps a candidate from being
    /// quiet. Absent (an older client), every failure on record counts, as before.
    #[serde(default = "forever")]
    pub window_ms: u64,
    /// The provider's requests per minute for this tenant; absent is unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
    /// Degraded mode with scheduled probes: a breaker due for its probe is skipped
    /// (`Skip { until: None }`) and its slot left to the scheduled pass. Absent: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leave_probe: bool,
}

fn forever() -> u64 {
    u64::MAX
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    #[serde(flatten)]
    pub admission: Gate,
    /// Keys to try in order; empty when skipped.
    pub keys: Vec<KeyId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<Grant>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Park {
    pub key: KeyId,
    pub until: u64,
}

/// How the candidate ended, as far as its breaker cares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    Success,
    /// A failure that counts toward the breaker.
    Failure {
        reason: String,
    },
    /// No verdict (client cancel, request-caused 4xx, rate-limited pool): frees a probe.
    Neutral,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportRequest {
    pub model: ModelId,
    #[serde(default)]
    pub parks: Vec<Park>,
    pub verdict: Verdict,
    #[serde(default)]
    pub probe: Option<u64>,
    pub breaker: BreakerSettings,
    /// Set by the scheduled pass on its own probe's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<ScheduledProbe>,
}

impl ReportRequest {
    /// Reports that would change nothing are not sent: a success or neutral end outside a probe
    /// with no parks leaves every window and breaker as it was.
    pub fn changes_anything(&self) -> bool {
        !self.parks.is_empty()
            || self.probe.is_some()
            || matches!(self.verdict, Verdict::Failure { .. })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelTransition {
    pub model: ModelId,
    /// This object's transition counter: the true order of its breakers' transitions.
    pub transition_seq: u64,
    #[serde(flatten)]
    pub transition: Transition,
    /// On `breaker.opened`: the open duration in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_ms: Option<u64>,
}

impl ProviderState {
    pub fn acquire(&mut self, req: &AcquireRequest, now: u64) -> Lease {
        if let Some(until) = req.rpm.and_then(|rpm| self.rate.full_until(rpm, now)) {
            return Lease {
                admission: Gate::Limited { until },
                keys: Vec::new(),
                grant: None,
            };
        }
        let admission = match self.breakers.get_mut(&req.model) {
            None => Gate::Pass,
            Some(b) if req.leave_probe && b.probe_due(now) => Gate::Skip { until: None },
            Some(b) => {
                self.next_token += 1;
                b.admit(now, req.probe_timeout_ms, self.next_token)
            }
        };
        let keys = match admission {
            Gate::Skip { .. } | Gate::Limited { .. } => Vec::new(),
            Gate::Pass | Gate::Probe { .. } => {
                if req.rpm.is_some() {
                    self.rate.admit(now);
                }
                self.keys.plan(&req.keys, req.strategy, now)
            }
        };
        // A provider with an `rpm` is never granted: only this object can count its requests.
        let quiet = admission == Gate::Pass
            && req.rpm.is_none()
            && self
                .breakers
                .get(&req.model)
                .is_none_or(|b| b.is_quiet(now, req.window_ms))
            && !self.keys.any_parked();
        let grant = (req.lease_ms > 0 && quiet).then(|| Grant {
            until: safe_after(now, req.lease_ms),
            cursor: self.keys.reserve(GRANT_BLOCK),
            block: GRANT_BLOCK,
        });
        Lease {
            admission,
            keys,
            grant,
        }
    }

    /// A scheduled probe: the breaker's one half-open probe slot, taken exactly as a
    /// user request takes it (`Breaker::admit`), or a skip. A closed breaker is never probed, and
    /// while any probe is out (scheduled or a user's) every other request skips, both ways.
    pub fn acquire_probe(&mut self, req: &AcquireRequest, now: u64) -> Lease {
        let skip = |until| Lease {
            admission: Gate::Skip { until },
            keys: Vec::new(),
            grant: None,
        };
        let Some(b) = self.breakers.get_mut(&req.model) else {
            return skip(None);
        };
        self.next_token += 1;
        match b.admit(now, req.probe_timeout_ms, self.next_token) {
            Gate::Probe { token } => {
                if req.rpm.is_some() {
                    self.rate.admit(now);
                }
                Lease {
                    admission: Gate::Probe { token },
                    keys: self.keys.plan(&req.keys, req.strategy, now),
                    grant: None,
                }
            }
            Gate::Skip { until } => skip(until),
            Gate::Pass | Gate::Limited { .. } => skip(None),
        }
    }

    pub fn report(&mut self, req: &ReportRequest, now: u64) -> Vec<ModelTransition> {
        if let Some(probe) = req.scheduled {
            // A 429 or a request-caused 4xx is an answer: the provider is reachable.
            let answered = !matches!(req.verdict, Verdict::Failure { .. });
            self.probes = Some(ProbeRecord::after(self.probes, probe, answered));
        }
        for park in &req.parks {
            self.keys.park(&park.key, park.until, now);
        }
        let breaker = self.breakers.entry(req.model.clone()).or_default();
        let failed_probe =
            matches!(*breaker, Breaker::HalfOpen { probe, .. } if req.probe == Some(probe));
        // A failed probe re-opens one step further along `open_durations_ms`; a trip starts at 0.
        let level = match self.escalation.get(&req.model) {
            Some(e) if failed_probe => e.level.saturating_add(1),
            _ => 0,
        };
        let mut settings = req.breaker;
        settings.open_duration_ms = req.breaker.open_ms(level);
        let transition = match &req.verdict {
            Verdict::Success => breaker.success(req.probe),
            Verdict::Failure { reason } => breaker.failure(now, &settings, req.probe, reason),
            Verdict::Neutral => {
                breaker.release(req.probe, now);
                None
            }
        };
        let open_ms = match &transition {
            Some(Transition::Opened { .. }) => {
                let open_ms = settings.open_duration_ms;
                self.escalation
                    .insert(req.model.clone(), Escalation { level, open_ms });
                Some(open_ms)
            }
            _ => None,
        };
        self.forget_idle(&req.model);
        transition
            .map(|t| {
                let mut numbered = self.numbered(req.model.clone(), t);
                numbered.open_ms = open_ms;
                numbered
            })
            .into_iter()
            .collect()
    }

    fn numbered(&mut self, model: ModelId, transition: Transition) -> ModelTransition {
        self.transitions += 1;
        ModelTransition {
            model,
            transition_seq: self.transitions,
            transition,
            open_ms: None,
        }
    }

    /// Renews a streaming probe's deadline (see `Breaker::hold`); whether anything changed.
    pub fn hold(&mut self, model: &ModelId, probe: u64, now: u64, ms: u64) -> bool {
        self.breakers
            .get_mut(model)
            .is_some_and(|b| b.hold(probe, now, ms))
    }

    /// Closes by hand every breaker, or only `model`'s, and frees every parked key of this
    /// provider: a reset is the operator saying "try it again now", and a park is the one other
    /// thing that keeps a provider's traffic away.
    pub fn reset(&mut self, model: Option<&str>) -> Vec<ModelTransition> {
        self.keys.unpark_all();
        let mut closed = Vec::new();
        for (m, b) in self.breakers.iter_mut() {
            if model.is_some_and(|want| want != m.as_str()) {
                continue;
            }
            if let Some(t) = b.reset("manual reset") {
                closed.push((m.clone(), t));
            }
        }
        self.breakers.retain(|_, b| !b.is_closed());
        let breakers = &self.breakers;
        self.escalation.retain(|m, _| breakers.contains_key(m));
        closed
            .into_iter()
            .map(|(m, t)| self.numbered(m, t))
            .collect()
    }

    pub fn parked_until(&self, key: &str) -> Option<u64> {
        self.keys.parked_until(key)
    }

    /// Admissions of the last minute, oldest first (not persisted; a snapshot carries them).
    pub fn admitted(&self) -> Vec<u64> {
        self.rate.times()
    }

    /// This state with `times` as its admissions (a snapshot read back).
    pub fn with_admitted(mut self, times: Vec<u64>) -> Self {
        self.rate = RequestRate::from_times(times);
        self
    }

    /// The keys parked at `now` and when each is free (the admin stats' `parked_keys`).
    pub fn parked_keys(&self, now: u64) -> crate::config::SortedMap<String, u64> {
        self.keys.parked_now(now)
    }

    /// How many keys are parked at `now` (the live stats' `parked_share`).
    pub fn parked_count(&self, now: u64) -> usize {
        self.keys.parked_at(now)
    }

    /// How many requests were admitted in the minute before `now` (`rpm_share`).
    pub fn admitted_in_minute(&self, now: u64) -> usize {
        self.rate.in_minute(now)
    }

    /// A closed breaker forgets its escalation (the next trip starts at the first duration) and,
    /// with no failure on record, is not stored at all.
    fn forget_idle(&mut self, model: &ModelId) {
        if self.breakers.get(model).is_none_or(Breaker::is_closed) {
            self.escalation.remove(model);
        }
        if self.breakers.get(model) == Some(&Breaker::default()) {
            self.breakers.remove(model);
        }
    }
}

#[path = "provider_views.rs"]
mod views;
pub use views::{BreakerHealth, BreakerStatus, BreakerView, PassView};

#[cfg(test)]
#[path = "provider_state_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "escalation_tests.rs"]
mod escalation_tests;

#[cfg(test)]
#[path = "probe_tests.rs"]
mod probe_tests;
