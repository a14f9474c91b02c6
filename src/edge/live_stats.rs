//! This isolate's live stats: per tenant/provider, the routing object's last snapshot
//! of each model's stats and this isolate's outcomes not yet folded into it
//! (`routing::stats::isolate_stats`). The ranking reads both through `IsolateView`, so an isolate sees its
//! own outcomes at once; batches travel to the object inside `/acquire` and `/report`
//! (`routing_client`), or in a timed `/stats` flush under `waitUntil` after a request.

use super::events::{fault, Fault};
use super::http::now_ms;
use super::isolate::isolate;
use super::local_grants::with_grants;
use super::routing_object::call_object;
use crate::cascade::CandidateAttempt;
use crate::config::SortedMap;
use crate::config::{ModelId, ProviderName, TenantId};
use crate::routing::stats::model_stats::Sample;
use crate::routing::stats::stats_book::{StatsPush, StatsSnapshot};
use crate::routing::{ModelHealth, Observed};
use worker::{Context, Env, Method};

pub use crate::routing::stats::isolate_stats::ProviderStats;

/// `LIVE_STATS_FLUSH_MS` default: outcomes wait at most this long (after a request) before an
/// isolate that makes no acquire or report sends them; other isolates see them within it.
pub const DEFAULT_FLUSH_MS: u64 = 2_000;

pub fn with_stats<R>(
    tenant: &TenantId,
    provider: &str,
    f: impl FnOnce(&mut ProviderStats) -> R,
) -> R {
    isolate(|i| {
        f(i.live_stats
            .borrow_mut()
            .provider(tenant.as_str(), provider))
    })
}

/// Adds one sample of `model` to this isolate's pending outcomes.
pub fn record(tenant: &TenantId, provider: &str, model: &str, sample: Sample) {
    let now = now_ms();
    with_stats(tenant, provider, |p| p.record(model, sample, now));
}

/// Every sent attempt of a request's cascade, once it has ended (`CandidateAttempt::ended_sample`).
pub fn record_attempts(
    tenant: &TenantId,
    attempts: &[CandidateAttempt],
    streamed: bool,
    headers_ms: Option<u64>,
) {
    for a in attempts {
        if let Some(sample) = a.ended_sample(streamed, headers_ms) {
            record(tenant, &a.provider, &a.model, sample);
        }
    }
}

/// The pending batch for a call to the object (`None` while another call carries one).
pub fn take(tenant: &TenantId, provider: &str) -> Option<StatsPush> {
    with_stats(tenant, provider, ProviderStats::take)
}

/// A call's answer (`carried`: it carried `take`'s batch; else it only asked for a snapshot).
pub fn answered(tenant: &TenantId, provider: &str, carried: bool, answer: Option<StatsSnapshot>) {
    with_stats(tenant, provider, |p| p.answered(carried, answer));
}

/// After a request: every provider of `tenant` whose outcomes have waited `interval_ms` sends
/// them in one `/stats` call under `waitUntil`, at most one in flight per provider. Not a call of
/// the request (its response does not wait, and it is not in its `durable_object_calls`).
pub fn flush_due(env: &Env, ctx: &Context, tenant: &TenantId, interval_ms: u64) {
    let now = now_ms();
    let due = isolate(|i| {
        let mut stats = i.live_stats.borrow_mut();
        stats.take_due(tenant.as_str(), now, interval_ms)
    });
    for (provider, push) in due {
        let (env, tenant) = (env.clone(), tenant.clone());
        ctx.wait_until(async move {
            let answer = send(&env, &tenant, &provider, &push).await;
            answered(&tenant, &provider, true, answer);
        });
    }
}

/// One `/stats` call: folds `push` and answers the provider's snapshot (`None` if it failed).
async fn send(
    env: &Env,
    tenant: &TenantId,
    provider: &str,
    push: &StatsPush,
) -> Option<StatsSnapshot> {
    let body = serde_json::to_string(push).ok();
    let sent = call_object(env, tenant, provider, Method::Post, "/stats", body).await;
    sent.map_err(|e| {
        fault(Fault::LiveStatsNotSent {
            provider,
            error: &e,
        });
    })
    .ok()
}

/// Reads every provider's snapshot, sending this isolate's pending outcomes first so its own
/// are counted: one call per provider (a stats route, not the hot path).
pub async fn read_tenant(
    env: &Env,
    tenant: &TenantId,
    providers: impl Iterator<Item = &ProviderName>,
) -> SortedMap<String, StatsSnapshot> {
    let reads = providers.map(|p| async move {
        let provider = p.as_str();
        let taken = take(tenant, provider);
        let push = taken.clone().unwrap_or_default();
        let answer = send(env, tenant, provider, &push).await;
        answered(tenant, provider, taken.is_some(), answer.clone());
        (provider.to_owned(), answer)
    });
    futures::future::join_all(reads)
        .await
        .into_iter()
        .filter_map(|(p, a)| Some((p, a?)))
        .collect()
}

/// The ranking's view from this isolate, at one instant.
pub struct IsolateView<'a> {
    pub tenant: &'a TenantId,
    pub now_ms: u64,
}

impl Observed for IsolateView<'_> {
    fn health(&self, provider: &ProviderName, model: &ModelId) -> Option<ModelHealth> {
        let known = with_stats(self.tenant, provider.as_str(), |p| {
            p.health(model.as_str(), self.now_ms)
        });
        let skipping = with_grants(self.tenant, provider.as_str(), |book| {
            book.skipping(model, self.now_ms)
        });
        ModelHealth::with_skipping(known, skipping)
    }
}
