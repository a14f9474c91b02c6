//! `/v1/health`: liveness without credentials; with a caller key, that tenant's breakers and
//! whether it is degraded.

use super::caller::caller;
use super::deployment::Deployment;
use super::http::{self, HttpReply};
use super::limits::count_call;
use super::metrics::Metrics;
use super::routing_object;
use super::store;
use crate::health::health_answer::{breaker_entries, degraded_since, keyed_answer};
use crate::request::identify::invalid_api_key;
use crate::surfaces::Surface;
use serde_json::json;
use worker::{Context, Env, Request};

/// Without credentials: liveness only. With a caller key: that tenant's breakers that are not closed.
pub async fn health(req: Request, env: &Env, ctx: &Context, dep: &Deployment) -> HttpReply {
    let metrics = Metrics::default();
    let Some(key) = caller(&req, env, ctx, dep, &metrics).await? else {
        return http::json(200, &json!({"status": "ok"}));
    };
    // One routing-object call per provider: a call counts against the key's `rpm`.
    if let Err(refused) = count_call(env, &key, "health", &metrics).await {
        return super::limits::denied_response(&refused, Surface::Chat);
    }
    let cfg = store::tenant_config(env, ctx, &key.tenant, &dep.defaults, &metrics)
        .await?
        .ok_or_else(invalid_api_key)?;
    let tenant = &cfg.tenant;
    let lookups = cfg.providers.keys().map(|p| async move {
        let views = routing_object::breakers(env, tenant, p.as_str()).await;
        (p, views)
    });
    let mut breakers = Vec::new();
    for (provider, views) in futures::future::join_all(lookups).await {
        let views = views.map_err(|e| super::d1::storage_error("breaker state", e))?;
        breakers.extend(breaker_entries(provider.as_str(), views));
    }
    // Read from D1, not the cached config, so it is exact the moment a pass stored it.
    let mode = stored_mode(env, tenant).await;
    http::json(
        200,
        &keyed_answer(breakers, degraded_since(mode.as_deref())),
    )
}

async fn stored_mode(env: &Env, tenant: &crate::config::TenantId) -> Option<String> {
    let db = super::d1::Db::open(env).ok()?;
    db.health_mode(tenant).await.ok()?
}
