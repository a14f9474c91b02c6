//! One isolate's live stats of one tenant/provider: the routing object's last snapshot,
//! the batch it has sent and not yet had answered, and its outcomes since. An isolate keeps one per
//! tenant/provider (`IsolateStats`); the rules of sending live here, with time passed in.
//!
//! No outcome is lost and none is counted twice: a batch leaves `pending` when it is taken for a
//! call, and is dropped only when the object answers that call with a snapshot (which has folded
//! it). A call that fails, or an older object that answers without a snapshot, puts it back.

use super::model_stats::{ModelStats, OutcomeBatch, Sample};
use super::stats_book::{Batches, StatsPush, StatsSnapshot};
use crate::health::headroom::{Figure, Headrooms};
use crate::health::provider_state::BreakerStatus;
use crate::routing::observed::ModelHealth;
use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct ProviderStats {
    /// The routing object's stats as last answered.
    pub snapshot: StatsSnapshot,
    /// Outcomes gathered here since the last batch was taken, by model id.
    pub pending: Batches,
    /// When the oldest outcome in `pending` was recorded.
    pub pending_since: Option<u64>,
    /// The batch of the one call in flight (and its `pending_since`): at most one per isolate.
    sending: Option<(Batches, u64)>,
    /// Headroom figures this isolate's answers reported: all (its own view) and those not yet
    /// sent (sent again after a failed call: figures merge by time seen, so twice is once).
    seen: Headrooms,
    unsent: Headrooms,
    sending_headroom: Headrooms,
}

impl ProviderStats {
    pub fn record(&mut self, model: &str, sample: Sample, now: u64) {
        self.pending
            .entry(model.to_owned())
            .or_default()
            .add(sample);
        self.pending_since.get_or_insert(now);
    }

    /// Headroom figures an answer of `key` reported; they travel with the next batch.
    pub fn saw(&mut self, key: &str, figures: &[Figure], now: u64) {
        self.seen.forget(now);
        self.seen.see(key, figures);
        self.unsent.see(key, figures);
        self.pending_since.get_or_insert(now);
    }

    /// The keys' headroom as this isolate knows it: the object's figures with its own.
    pub fn headrooms(&self) -> Headrooms {
        let mut all = self.snapshot.headroom.clone();
        all.merge(&self.seen);
        all
    }

    /// Whether a timed flush is due: outcomes have waited `interval_ms` and no call is in flight.
    pub fn flush_due(&self, now: u64, interval_ms: u64) -> bool {
        self.sending.is_none()
            && self
                .pending_since
                .is_some_and(|since| now.saturating_sub(since) >= interval_ms)
    }

    /// What a call carries: the pending batch (possibly empty: then it only asks for a snapshot).
    /// `None` while another call's batch is in flight; that call will bring the news back.
    pub fn take(&mut self) -> Option<StatsPush> {
        if self.sending.is_some() {
            return None;
        }
        let batches = std::mem::take(&mut self.pending);
        let since = self.pending_since.take().unwrap_or(u64::MAX);
        self.sending = Some((batches.clone(), since));
        self.sending_headroom = std::mem::take(&mut self.unsent);
        Some(StatsPush {
            batches,
            headroom: self.sending_headroom.clone(),
        })
    }

    /// The answer to a call that carried `take`'s push: a snapshot (the batch is folded in it),
    /// or none (the call failed, or the object is older): the batch goes back to pending.
    pub fn batch_answered(&mut self, answer: Option<StatsSnapshot>) {
        let Some((batches, since)) = self.sending.take() else {
            return;
        };
        match answer {
            Some(snapshot) => self.snapshot = snapshot,
            None => {
                self.unsent
                    .merge(&std::mem::take(&mut self.sending_headroom));
                for (model, batch) in &batches {
                    self.pending.entry(model.clone()).or_default().merge(batch);
                }
                if !batches.values().all(OutcomeBatch::is_empty) || !self.unsent.is_empty() {
                    let since = self.pending_since.map_or(since, |p| p.min(since));
                    self.pending_since = Some(since);
                }
            }
        }
    }

    /// A snapshot read without a batch of this isolate's (another route's read): installed
    /// unless the one held is newer.
    pub fn install(&mut self, snapshot: StatsSnapshot) {
        if snapshot.seq >= self.snapshot.seq {
            self.snapshot = snapshot;
        }
    }

    /// A call's answer: for a call that carried `take`'s batch, `batch_answered`; for one that carried
    /// none (a batch was in flight, or it only asked), `install` its snapshot if any.
    pub fn answered(&mut self, carried: bool, answer: Option<StatsSnapshot>) {
        match (carried, answer) {
            (true, answer) => self.batch_answered(answer),
            (false, Some(snapshot)) => self.install(snapshot),
            (false, None) => {}
        }
    }

    /// The snapshot's stats of `model` with what this isolate sent or gathered since folded in.
    pub fn measured(&self, model: &str, now: u64) -> Option<ModelStats> {
        let held = self
            .snapshot
            .models
            .get(model)
            .and_then(|m| m.stats.as_ref());
        let sending = self.sending.as_ref().and_then(|(b, _)| b.get(model));
        let pending = self.pending.get(model);
        if held.is_none() && sending.is_none() && pending.is_none() {
            return None;
        }
        let mut stats = held.cloned().unwrap_or_default();
        for batch in sending.into_iter().chain(pending) {
            stats.fold(batch, now);
        }
        Some(stats)
    }

    /// The breaker as the snapshot has it: open, and until when, if not yet past.
    pub fn open_until(&self, model: &str, now: u64) -> Option<u64> {
        let b = self.snapshot.models.get(model)?.breaker?;
        match (b.state, b.until) {
            (BreakerStatus::Open, Some(until)) if until > now => Some(until),
            _ => None,
        }
    }

    /// What the ranking reads of `model`; `None` when nothing is known of it.
    pub fn health(&self, model: &str, now: u64) -> Option<ModelHealth> {
        let measured = self.measured(model, now).map(|s| s.health(now));
        let open = self.open_until(model, now).is_some();
        let (parked_share, rpm_share) = (self.snapshot.parked_share, self.snapshot.rpm_share);
        let headroom = self.headrooms().best(now);
        let nothing = parked_share == 0.0 && rpm_share == 0.0 && headroom.is_none();
        if measured.is_none() && !open && nothing {
            return None;
        }
        Some(ModelHealth {
            breaker_open: open,
            parked_share,
            rpm_share,
            headroom,
            ..measured.unwrap_or_default()
        })
    }
}

/// One isolate's live stats of every tenant: tenant → provider → `ProviderStats`. A request's
/// flush check looks at its own tenant's only.
#[derive(Debug, Default)]
pub struct IsolateStats(HashMap<String, HashMap<String, ProviderStats>>);

impl IsolateStats {
    pub fn provider(&mut self, tenant: &str, provider: &str) -> &mut ProviderStats {
        let providers = self.0.entry(tenant.to_owned()).or_default();
        providers.entry(provider.to_owned()).or_default()
    }

    /// The batches of `tenant`'s providers whose flush is due (`ProviderStats::flush_due`), taken
    /// for their calls.
    pub fn take_due(
        &mut self,
        tenant: &str,
        now: u64,
        interval_ms: u64,
    ) -> Vec<(String, StatsPush)> {
        let Some(providers) = self.0.get_mut(tenant) else {
            return Vec::new();
        };
        providers
            .iter_mut()
            .filter(|(_, p)| p.flush_due(now, interval_ms))
            .filter_map(|(provider, p)| Some((provider.clone(), p.take()?)))
            .collect()
    }
}

#[cfg(test)]
#[path = "isolate_stats_tests.rs"]
mod tests;
