//! The request path's side of the metrics: one `RequestMetric` per request that
//! reached its tenant, added to this isolate's counters (`metrics_sink`) and, when configured,
//! written to Analytics Engine. A timed flush, when one is due, runs under the request's
//! `waitUntil` (or inside the stream's own, for a stream that settles later).

use super::metrics_sink::{self, Extra};
use crate::config::TenantId;
use crate::metrics::counts::RequestMetric;
use crate::request::finish::StreamMetric;
use crate::usage::UsageRecord;
use worker::{Context, Env};

pub fn record(env: &Env, ctx: &Context, tenant: &TenantId, metric: &RequestMetric, extra: Extra) {
    if let Some(flush) = metrics_sink::observe(env, tenant, metric, extra) {
        ctx.wait_until(flush);
    }
}

/// Inside the stream's `waitUntil`: adds a served stream's metric as it settles, and runs a due
/// flush there.
pub async fn finish(metric: StreamMetric, env: &Env, record: Option<&UsageRecord>, now_ms: u64) {
    let Some((tenant, metric, provider, tokens)) = metric.at_end(record, now_ms) else {
        return;
    };
    let extra = Extra {
        provider: &provider,
        tokens,
    };
    if let Some(flush) = metrics_sink::observe(env, &tenant, &metric, extra) {
        flush.await;
    }
}
