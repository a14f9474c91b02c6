//! `/v1/models` and `/v1/models/{id}`: the caller's models and aliases as OpenAI model objects.
//! `created` is when the entry's current definition was written (`updated_at`, in seconds): the
//! tables have no creation time, and this is the real time the id took its present meaning. It
//! comes with the cached config, so these routes make no D1 query on a warm isolate.
//!
//! A key with a `models` list sees only the names it may use (`KeyPolicy::allows`): any other
//! name is absent from the list and 404 on its own, exactly as a name that does not exist, so a
//! scoped key learns nothing of the rest of the catalog.

use super::caller::caller_config;
use super::deployment::Deployment;
use super::http::{self, HttpReply};
use super::metrics::Metrics;
use crate::api::{ApiError, ErrorKind};
use crate::config::{KeyPolicy, TenantConfig};
use crate::routing::auto::{self, AutoName};
use serde_json::{json, Value};
use worker::{Context, Env, Request};

/// The models and aliases `policy` may use, as OpenAI model objects.
fn objects(cfg: &TenantConfig, policy: &KeyPolicy) -> Vec<Value> {
    let created = |id: &str| cfg.written_at.get(id).copied().unwrap_or(0);
    let models = cfg.models.values().filter(|m| policy.allows(m.id.as_str())).map(|m| {
        json!({"id": m.id, "object": "model", "created": created(m.id.as_str()), "owned_by": m.provider})
    });
    let aliases = cfg.aliases.keys().filter(|a| policy.allows(a.as_str())).map(|a| {
        json!({"id": a, "object": "model", "created": created(a.as_str()), "owned_by": "cognigate-alias"})
    });
    // The `auto` names this key may call (`auto::allowed_by`). `auto:<rule>` took its
    // meaning when its rule was written; a strategy when the newest model it ranks was.
    let newest_model = cfg.models.keys().map(|m| created(m.as_str())).max();
    let auto = auto::listed(cfg, |r| policy.allows(r))
        .into_iter()
        .map(|id| {
            let created = match auto::parse(&id) {
                Some(AutoName::Rule(_)) => cfg.written_at.get(&id).copied(),
                _ => newest_model,
            };
            let created = created.unwrap_or(0);
            json!({"id": id, "object": "model", "created": created, "owned_by": "cognigate-auto"})
        });
    models.chain(aliases).chain(auto).collect()
}

pub async fn list_models(req: Request, env: &Env, ctx: &Context, dep: &Deployment) -> HttpReply {
    let metrics = Metrics::default();
    let (key, cfg) = caller_config(&req, env, ctx, dep, &metrics).await?;
    http::json(
        200,
        &json!({"object": "list", "data": objects(&cfg, &key.policy)}),
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
    let (key, cfg) = caller_config(&req, env, ctx, dep, &metrics).await?;
    objects(&cfg, &key.policy)
        .into_iter()
        .find(|o| o["id"] == id)
        .map_or_else(
            || {
                Err(ApiError::new(
                    ErrorKind::ModelNotFound,
                    format!("The model '{id}' does not exist."),
                )
                .with_param("model"))
            },
            |o| http::json(200, &o),
        )
}
