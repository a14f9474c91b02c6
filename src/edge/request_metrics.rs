//! The request path's side of the metrics: one `RequestMetric` per request that
//! reached its tenant, added to this isolate's counters (`metrics_sink`) and, when configured,
//! written to Analytics Engine. A timed flush, when one is due, runs under the request's
//! `waitUntil` (or inside the stream's own, for a stream that settles later).

use super::metrics_sink::{self, Extra};
use crate::config::TenantId;
use crate::metrics::counts::RequestMetric;
use crate::usage::{TokenCounts, UsageRecord};
use worker::{Context, Env};

pub fn record(env: &Env, ctx: &Context, tenant: &TenantId, metric: &RequestMetric, extra: Extra) {
    if let Some(flush) = metrics_sink::observe(env, tenant, metric, extra) {
        ctx.wait_until(flush);
    }
}

/// A served stream's metric, finished when the stream settles: its latency is then known, and
/// its tokens and cost.
pub struct StreamMetric {
    /// `None`: the request's tenant is unknown, and it is not counted.
    pub tenant: Option<TenantId>,
    pub metric: RequestMetric,
    pub provider: String,
    pub started_ms: u64,
}

impl StreamMetric {
    /// A stream without a usage owner (its model left the catalog): counted as it starts.
    pub fn count_now<T>(self, log: &super::request_end::LogContext<'_>) -> Option<T> {
        log.count(&self.metric, &self.provider, None);
        None
    }

    /// Inside the stream's `waitUntil`: adds the metric, and runs a due flush there.
    pub async fn finish(mut self, env: &Env, record: Option<&UsageRecord>, now_ms: u64) {
        self.metric.latency_ms = now_ms.saturating_sub(self.started_ms);
        self.metric.cost_usd = record.and_then(|r| r.cost_usd);
        let tokens: Option<TokenCounts> = record.and_then(|r| r.tokens);
        let extra = Extra {
            provider: &self.provider,
            tokens,
        };
        let Some(tenant) = &self.tenant else {
            return;
        };
        if let Some(flush) = metrics_sink::observe(env, tenant, &self.metric, extra) {
            flush.await;
        }
    }
}
