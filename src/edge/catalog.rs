//! `/v1/models` and `/v1/models/{id}`: the caller's models and aliases as OpenAI model objects
//! (`request::models`). They come with the cached config, so these routes make no D1 query
//! on a warm isolate.

use super::caller::caller_config;
use super::deployment::Deployment;
use super::http::{self, HttpReply};
use super::metrics::Metrics;
use crate::request::models::{model_object, model_objects};
use serde_json::json;
use worker::{Context, Env, Request};

pub async fn list_models(req: Request, env: &Env, ctx: &Context, dep: &Deployment) -> HttpReply {
    let metrics = Metrics::default();
    let (key, cfg) = caller_config(&req, env, ctx, dep, &metrics).await?;
    let data = model_objects(&cfg, &key.policy);
    http::json(200, &json!({"object": "list", "data": data}))
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
    http::json(200, &model_object(&cfg, &key.policy, id)?)
}
