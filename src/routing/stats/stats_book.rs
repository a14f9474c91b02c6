//! The routing object's side of the live stats: every isolate's batches of one
//! tenant/provider are folded here, and each call that brings some (or asks) is answered with a
//! snapshot of the provider's models, their breakers, and how much of its keys and `rpm` is
//! taken now.
//!
//! Isolates send their batches inside calls they already make (`/acquire` at grant renewal,
//! `/report`) or, when neither comes, in a timed `/stats` flush. The fields ride beside the old
//! messages (`AcquireCall`, `ReportCall`) with `#[serde(default)]`, so an older isolate or object
//! still works during a rolling deploy: an older object answers no snapshot, and the isolate then
//! keeps its batch (see `isolate_stats`).

use super::model_stats::{ModelStats, OutcomeBatch};
use crate::config::SortedMap;
use crate::health::headroom::Headrooms;
use crate::health::provider_state::{
    AcquireRequest, BreakerStatus, Lease, ModelTransition, ProviderState, ReportRequest,
};
use serde::{Deserialize, Serialize};

/// Batches of one isolate, by model id.
pub type Batches = SortedMap<String, OutcomeBatch>;

/// What an isolate adds to a call: its outcomes since its last fold (possibly none, which only
/// asks for a snapshot).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsPush {
    #[serde(default)]
    pub batches: Batches,
    /// The headroom figures the isolate's answers reported since (`health::headroom`).
    #[serde(default, skip_serializing_if = "Headrooms::is_empty")]
    pub headroom: Headrooms,
}

/// `/acquire` as a stats-aware isolate sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcquireCall {
    #[serde(flatten)]
    pub acquire: AcquireRequest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<StatsPush>,
}

/// `/acquire`'s answer: the lease, and a snapshot when the call carried `stats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcquireAnswer {
    #[serde(flatten)]
    pub lease: Lease,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<StatsSnapshot>,
}

/// `/report` as a stats-aware isolate sends it.
#[derive(Debug, Serialize)]
pub struct ReportCall<'a> {
    #[serde(flatten)]
    pub report: &'a ReportRequest,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<&'a StatsPush>,
}

/// `/report`'s answer: the transitions, with a snapshot when the report carried `stats` (an
/// older object answers the plain list, and the isolate then keeps its batch).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ReportAnswer {
    WithStats {
        transitions: Vec<ModelTransition>,
        #[serde(default)]
        stats: Option<StatsSnapshot>,
    },
    Plain(Vec<ModelTransition>),
}

impl ReportAnswer {
    pub fn transitions(&self) -> Vec<ModelTransition> {
        match self {
            Self::WithStats { transitions, .. } | Self::Plain(transitions) => transitions.clone(),
        }
    }

    pub fn stats(self) -> Option<StatsSnapshot> {
        match self {
            Self::WithStats { stats, .. } => stats,
            Self::Plain(_) => None,
        }
    }
}

/// The `stats` field of a `/report` body (the rest is read by `wire::read_report`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ReportStats {
    #[serde(default)]
    pub stats: Option<StatsPush>,
}

/// A breaker that is not closed, as the snapshot carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakerNow {
    pub state: BreakerStatus,
    /// While open: when it half-opens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
}

/// One model in a snapshot: its stats (absent if none yet) and its breaker if not closed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelSnapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<ModelStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaker: Option<BreakerNow>,
}

/// What the object answers: only models with stats or a breaker that is not closed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatsSnapshot {
    /// The book's fold count when taken: an isolate never installs an older snapshot over a newer.
    #[serde(default)]
    pub seq: u64,
    #[serde(default)]
    pub models: SortedMap<String, ModelSnapshot>,
    /// Share of the provider's keys parked now (0 to 1).
    #[serde(default)]
    pub parked_share: f64,
    /// Share of the provider's `rpm` admitted in the last minute (0 to 1; 0 without `rpm`).
    #[serde(default)]
    pub rpm_share: f64,
    /// The keys parked now, by key id, with when each is free (the console; absent from
    /// older objects, and on the wire only while a key is parked).
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub parked: SortedMap<String, u64>,
    /// Every isolate's headroom figures of the provider's keys, merged.
    #[serde(default, skip_serializing_if = "Headrooms::is_empty")]
    pub headroom: Headrooms,
}

/// The object's stats of one tenant/provider, stored under their own key so an acquire that
/// brings no batch writes nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatsBook {
    #[serde(default)]
    pub models: SortedMap<String, ModelStats>,
    /// Moves on with every fold that changed something.
    #[serde(default)]
    pub seq: u64,
    /// The provider's key count and `rpm` as its last acquire said (the shares' denominators).
    #[serde(default)]
    pub keys: u32,
    #[serde(default)]
    pub rpm: Option<u32>,
    /// The keys' headroom figures as the isolates sent them, merged. Memory only, and never a
    /// reason to write: they expire within a minute or their reset, and an evicted object
    /// hears them again with the next answers.
    #[serde(skip)]
    pub headroom: Headrooms,
}

impl StatsBook {
    /// Folds an isolate's batches (and headroom figures, kept in memory) as of `now`; whether
    /// anything that must be stored changed.
    pub fn fold(&mut self, push: &StatsPush, now: u64) -> bool {
        let mut changed = false;
        for (model, batch) in &push.batches {
            if batch.is_empty() {
                continue;
            }
            self.models
                .entry(model.clone())
                .or_default()
                .fold(batch, now);
            changed = true;
        }
        if !push.headroom.is_empty() {
            self.headroom.forget(now);
            self.headroom.merge(&push.headroom);
        }
        if changed {
            self.seq = self.seq.saturating_add(1);
        }
        changed
    }

    /// Whether `note_pool` would change nothing.
    pub fn knows_pool(&self, req: &AcquireRequest) -> bool {
        usize::try_from(self.keys).is_ok_and(|k| k == req.keys.len()) && self.rpm == req.rpm
    }

    /// Remembers the provider's pool as an acquire describes it (memory only: it comes again).
    pub fn note_pool(&mut self, req: &AcquireRequest) {
        self.keys = u32::try_from(req.keys.len()).unwrap_or(u32::MAX);
        self.rpm = req.rpm;
    }

    /// The snapshot an isolate installs: the stats, the breakers of `state` not closed now, and
    /// the shares of parked keys and used `rpm`.
    pub fn snapshot(&self, state: &ProviderState, now: u64) -> StatsSnapshot {
        let mut models: SortedMap<String, ModelSnapshot> = self
            .models
            .iter()
            .map(|(m, s)| {
                let snap = ModelSnapshot {
                    stats: Some(s.clone()),
                    breaker: None,
                };
                (m.clone(), snap)
            })
            .collect();
        for view in state.not_closed(now) {
            models.entry(view.model.to_string()).or_default().breaker = Some(BreakerNow {
                state: view.state,
                until: view.breaker_until,
            });
        }
        let share = |used: usize, of: u32| match of {
            0 => 0.0,
            of => (used as f64 / f64::from(of)).min(1.0),
        };
        StatsSnapshot {
            seq: self.seq,
            models,
            parked_share: share(state.parked_count(now), self.keys),
            parked: state.parked_keys(now),
            rpm_share: self
                .rpm
                .map_or(0.0, |rpm| share(state.admitted_in_minute(now), rpm)),
            headroom: self.headroom.clone(),
        }
    }
}

/// `GET /gauges` of a routing object (the scrape): each model it knows (measured, or with
/// a breaker not closed) and whether its breaker is open now, and how many keys are parked now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gauges {
    #[serde(default)]
    pub breakers: SortedMap<String, bool>,
    #[serde(default)]
    pub parked: u64,
}

impl Gauges {
    pub fn of(book: Option<&StatsBook>, state: Option<&ProviderState>, now: u64) -> Self {
        let mut breakers: SortedMap<String, bool> = book
            .map(|b| b.models.keys().map(|m| (m.clone(), false)).collect())
            .unwrap_or_default();
        let (views, parked) = state.map_or((Vec::new(), 0), |st| {
            (st.not_closed(now), st.parked_count(now))
        });
        for view in views {
            breakers.insert(view.model.to_string(), view.state == BreakerStatus::Open);
        }
        Self {
            breakers,
            parked: u64::try_from(parked).unwrap_or(u64::MAX),
        }
    }
}

#[cfg(test)]
#[path = "stats_book_tests.rs"]
mod tests;
