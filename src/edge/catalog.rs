//! `/v1/models` and `/v1/models/{id}`: the caller's models and aliases as OpenAI model objects.
//! `created` is when the entry's current definition was written (`updated_at`, in seconds): the
//! tables have no creation time, and this is the real time the id took its present meaning.

use super::deployment::Deployment;
use super::gateway::tenant_config;
use super::http::{self, HttpReply};
use super::metrics::Metrics;
use super::store::{db, js, rows, storage_error};
use crate::api::ApiError;
use crate::config::TenantConfig;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use worker::{Context, Env, Request};

/// One D1 read, only on these (rare) routes: the cached config carries no times.
async fn written_at(env: &Env, cfg: &TenantConfig) -> Result<BTreeMap<String, u64>, ApiError> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        updated_at: f64,
    }
    let r = db(env)?
        .prepare(
            "SELECT id, updated_at FROM models WHERE tenant_id = ?1 \
             UNION ALL SELECT name AS id, updated_at FROM aliases WHERE tenant_id = ?1",
        )
        .bind(&[js(cfg.tenant.as_str())])
        .map_err(|e| storage_error("bind", e))?
        .all()
        .await
        .map_err(|e| storage_error("model times", e))?;
    Ok(rows::<Row>(&r)?
        .into_iter()
        .map(|row| (row.id, (row.updated_at / 1000.0) as u64))
        .collect())
}

fn objects(cfg: &TenantConfig, times: &BTreeMap<String, u64>) -> Vec<Value> {
    let created = |id: &str| times.get(id).copied().unwrap_or(0);
    let models = cfg.models.values().map(|m| {
        json!({"id": m.id, "object": "model", "created": created(m.id.as_str()), "owned_by": m.provider})
    });
    let aliases = cfg.aliases.keys().map(|a| {
        json!({"id": a, "object": "model", "created": created(a.as_str()), "owned_by": "cognigate-alias"})
    });
    models.chain(aliases).collect()
}

pub async fn list_models(req: Request, env: &Env, ctx: &Context, dep: &Deployment) -> HttpReply {
    let metrics = Metrics::default();
    let cfg = tenant_config(&req, env, ctx, dep, &metrics).await?;
    let times = written_at(env, &cfg).await?;
    http::json(
        200,
        &json!({"object": "list", "data": objects(&cfg, &times)}),
    )
}

/// The SDKs' `models.retrieve`.
pub async fn retrieve_model(
    req: Request,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    id: &str,
) -> HttpReply {
    let metrics = Metrics::default();
    let cfg = tenant_config(&req, env, ctx, dep, &metrics).await?;
    let times = written_at(env, &cfg).await?;
    objects(&cfg, &times)
        .into_iter()
        .find(|o| o["id"] == id)
        .map_or_else(
            || {
                Err(ApiError::invalid_request(
                    404,
                    "model_not_found",
                    format!("The model '{id}' does not exist."),
                )
                .with_param("model"))
            },
            |o| http::json(200, &o),
        )
}
