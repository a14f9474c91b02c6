//! This isolate's live stats (issue 22): per tenant/provider, the routing object's last snapshot
//! of each model's stats and this isolate's outcomes not yet folded into it. The ranking reads
//! both through `IsolateView`, so an isolate sees its own outcomes at once.

use super::local_grants::with_grants;
use crate::cascade::CandidateAttempt;
use crate::config::{ModelId, ProviderName, TenantId};
use crate::routing::{ModelHealth, Observed};
use crate::state::model_stats::{ModelStats, OutcomeBatch, Sample};
use std::cell::RefCell;
use std::collections::HashMap;

/// One tenant/provider's stats as this isolate holds them, by model id.
#[derive(Debug, Default)]
pub struct ProviderStats {
    /// The routing object's stats as last answered.
    pub snapshot: HashMap<String, ModelStats>,
    /// Outcomes gathered here since the last batch was sent.
    pub pending: HashMap<String, OutcomeBatch>,
}

type Scope = (String, String);

thread_local! {
    static STATS: RefCell<HashMap<Scope, ProviderStats>> = RefCell::new(HashMap::new());
}

pub fn with_stats<R>(
    tenant: &TenantId,
    provider: &str,
    f: impl FnOnce(&mut ProviderStats) -> R,
) -> R {
    STATS.with(|s| {
        let mut s = s.borrow_mut();
        f(s.entry((tenant.to_string(), provider.to_owned()))
            .or_default())
    })
}

/// Adds one sample of `model` to this isolate's pending outcomes.
pub fn record(tenant: &TenantId, provider: &str, model: &str, sample: Sample) {
    with_stats(tenant, provider, |p| {
        p.pending.entry(model.to_owned()).or_default().add(sample);
    });
}

/// Every sent attempt of a request's cascade, once it has ended (a stream: once it started).
pub fn record_attempts(tenant: &TenantId, attempts: &[CandidateAttempt], streamed: bool) {
    for a in attempts {
        if let Some(sample) = a.sample(streamed) {
            record(tenant, &a.provider, &a.model, sample);
        }
    }
}

/// The ranking's view from this isolate, at one instant.
pub struct IsolateView<'a> {
    pub tenant: &'a TenantId,
    pub now_ms: u64,
}

impl Observed for IsolateView<'_> {
    fn health(&self, provider: &ProviderName, model: &ModelId) -> Option<ModelHealth> {
        let measured = with_stats(self.tenant, provider.as_str(), |p| {
            let snapshot = p.snapshot.get(model.as_str());
            let pending = p.pending.get(model.as_str());
            if snapshot.is_none() && pending.is_none() {
                return None;
            }
            let mut stats = snapshot.cloned().unwrap_or_default();
            if let Some(batch) = pending {
                stats.fold(batch, self.now_ms);
            }
            Some(stats.health(self.now_ms))
        });
        let open = with_grants(self.tenant, provider.as_str(), |book| {
            book.skipping(model, self.now_ms)
        });
        match (measured, open) {
            (None, false) => None,
            (m, breaker_open) => Some(ModelHealth {
                breaker_open,
                ..m.unwrap_or_default()
            }),
        }
    }
}
