//! `GET /v1/models/metrics`: the live stats of every catalog model the
//! caller key may use (`KeyPolicy::allows`), in the admin stats route's shape. This isolate sends
//! its pending outcomes first (one routing-object call per provider of the tenant), so its own
//! are counted; other isolates' are within their flush interval (`LIVE_STATS_FLUSH_MS`).

use super::caller::caller_config;
use super::deployment::Deployment;
use super::http::{self, now_ms, HttpReply};
use super::limits::count_call;
use super::live_stats::read_tenant;
use super::metrics::Metrics;
use crate::admin::views::{List, StatsRow};
use crate::surfaces::Surface;
use worker::{Context, Env, Request};

pub async fn model_metrics(req: Request, env: &Env, ctx: &Context, dep: &Deployment) -> HttpReply {
    let metrics = Metrics::default();
    let (key, cfg) = caller_config(&req, env, ctx, dep, &metrics).await?;
    // One routing-object call per provider: a call counts against the key's `rpm`.
    if let Err(refused) = count_call(env, &key, "models_metrics", &metrics).await {
        return super::limits::denied_response(&refused, Surface::Chat);
    }
    let snapshots = read_tenant(env, &cfg.tenant, cfg.providers.keys()).await;
    let models = cfg
        .models
        .values()
        .filter(|m| cfg.providers.contains_key(&m.provider) && key.policy.allows(m.id.as_str()))
        .map(|m| (m.id.as_str(), m.provider.as_str()));
    let data = StatsRow::rows(models, &snapshots, now_ms());
    http::json(200, &List { data })
}
