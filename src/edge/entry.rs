//! The fetch entry point: paths to handlers, and every refusal in the one error shape.

use super::deployment::deployment;
use super::{admin, gateway, http};
use crate::api::{ApiError, Route};
use worker::{event, Context, Env, Method, Request, Response, Result};

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    let request_id = gateway::new_request_id();
    match route(req, &env, &ctx, &request_id).await {
        Ok(resp) => Ok(resp),
        Err(err) => http::error(&err),
    }
}

async fn route(
    req: Request,
    env: &Env,
    ctx: &Context,
    request_id: &str,
) -> std::result::Result<Response, ApiError> {
    let dep = deployment(env)?;
    let route = Route::parse(&req.path())?;
    match (req.method(), route) {
        (Method::Post, Route::ChatCompletions) => {
            gateway::chat_completions(req, env, ctx, &dep, request_id)
                .await
                .map_err(|e| super::store::storage_error("respond", e))
        }
        (Method::Get, Route::ListModels) => gateway::list_models(req, env, ctx, &dep).await,
        (Method::Get, Route::Health) => gateway::health(req, env, ctx, &dep).await,
        (_, r) if r.is_admin() => admin::handle(req, env, ctx, &dep, r).await,
        _ => Err(ApiError::method_not_allowed()),
    }
}
