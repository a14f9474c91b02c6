//! `/v1/health` and `/v1/providers/health` on the runtime: who calls, the routing objects'
//! views and the stored degraded mode. What to read and answer is `request::health_route`'s.

use super::caller::caller;
use super::deployment::Deployment;
use super::http::{self, HttpReply};
use super::limits::count_call;
use super::metrics::Metrics;
use super::routing_client::pass_view;
use super::store;
use crate::config::TenantId;
use crate::health::health_answer::degraded_since;
use crate::request::health_route::HealthRoute;
use crate::request::identify::invalid_api_key;
use crate::surfaces::Surface;
use worker::{Context, Env, Request};

/// Without credentials: liveness (`/v1/health`) or 401 (`/v1/providers/health`). With a caller
/// key: one routing-object call per provider read, and the call counts against the key's `rpm`.
pub async fn health(
    req: Request,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    route: HealthRoute,
) -> HttpReply {
    let metrics = Metrics::default();
    let Some(key) = caller(&req, env, ctx, dep, &metrics).await? else {
        return http::json(200, &route.without_key()?);
    };
    if let Err(refused) = count_call(env, &key, route.counted_as(), &metrics).await {
        return super::limits::denied_response(&refused, Surface::Chat);
    }
    let cfg = store::tenant_config(env, ctx, &key.tenant, &dep.defaults, &metrics)
        .await?
        .ok_or_else(invalid_api_key)?;
    let (tenant, providers) = (&cfg.tenant, route.providers(&cfg, &key.policy));
    let views = providers.iter().map(|p| pass_view(env, tenant, &p.name));
    let views = futures::future::join_all(views).await;
    // Read from D1, not the cached config, so it is exact the moment a pass stored it.
    let mode = if route.reads_degraded() {
        stored_mode(env, tenant).await
    } else {
        None
    };
    let answer = route.answer(providers, views, degraded_since(mode.as_deref()));
    let answer = answer.map_err(|e| super::d1::storage_error("breaker state", e))?;
    http::json(200, &answer)
}

async fn stored_mode(env: &Env, tenant: &TenantId) -> Option<String> {
    let db = super::d1::Db::open(env).ok()?;
    db.health_mode(tenant).await.ok()?
}
