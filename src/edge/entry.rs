//! The fetch entry point: paths to handlers, and every refusal in the one error shape.

use super::deployment::deployment;
use super::own_poll::own_poll;
use super::{admin, count_tokens, gateway, health, http};
use crate::api::{ApiError, Endpoint};
use crate::request::health_route::HealthRoute;
use crate::surfaces::Surface;
use worker::{event, web_sys, Context, Env, Method, Request, Response, Result};

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
}

// The runtime's own request: the chat surfaces read it as is, and only the other routes wrap it
// in workers-rs's `Request` (which reads `cf` and parses the URL on the way in; `http::RawRequest`).
#[event(fetch)]
async fn fetch(req: web_sys::Request, env: Env, ctx: Context) -> Result<Response> {
    let request_id = gateway::new_request_id();
    let path = crate::api::endpoint::path_of(&req.url());
    let surface = Surface::for_path(&path);
    let resp = match route(req, &env, &ctx, &request_id).await {
        // The request's order wrote its ids with the rest of its headers.
        Ok(Routed::Named(resp)) => return Ok(resp),
        Ok(Routed::Plain(resp)) => resp,
        Err(err) => http::error_in(surface, &err)?,
    };
    if resp.status_code() == 405 {
        resp.headers().set(
            "allow",
            &crate::api::endpoint::allowed_methods(&path).join(", "),
        )?;
    }
    // Every answer names its request under each header a client reads.
    let ids = super::reply::REQUEST_ID_HEADERS.map(|n| (n, &*request_id));
    super::js_fetch::set_all(&resp.headers().0, &ids)?;
    Ok(resp)
}

/// An answer, and whether it already names its request.
enum Routed {
    Named(Response),
    Plain(Response),
}

async fn route(
    req: web_sys::Request,
    env: &Env,
    ctx: &Context,
    request_id: &str,
) -> std::result::Result<Routed, ApiError> {
    let dep = deployment(env)?;
    let route = Endpoint::parse(&crate::api::endpoint::path_of(&req.url()))?;
    let method = req.method();
    if crate::api::endpoint::is_unknown_method(&method) {
        return Err(ApiError::method_not_allowed());
    }
    let method = Method::from(method);
    if let (Method::Post, Some(surface)) = (&method, Surface::of_call(&route)) {
        return own_poll(gateway::serve(surface, req, env, ctx, &dep, request_id))
            .await
            .map(Routed::Named)
            .map_err(|e| super::d1::storage_error("respond", e));
    }
    let req = Request::from(req);
    // Each handler in a function of its own (own_poll.rs): a first request compiles its route only.
    let resp = match (method, route) {
        (Method::Post, Endpoint::CountTokens) => {
            own_poll(count_tokens::count_tokens(req, env, ctx, &dep)).await
        }
        (Method::Get, Endpoint::ListModels) => {
            own_poll(super::catalog::list_models(req, env, ctx, &dep)).await
        }
        (Method::Get, Endpoint::ModelMetrics) => {
            own_poll(super::model_metrics::model_metrics(req, env, ctx, &dep)).await
        }
        (Method::Get, Endpoint::RetrieveModel(id)) => {
            own_poll(super::catalog::retrieve_model(req, env, ctx, &dep, &id)).await
        }
        (Method::Get, r @ (Endpoint::Health | Endpoint::ProvidersHealth)) => {
            own_poll(health::health(req, env, ctx, &dep, HealthRoute::of(&r))).await
        }
        (Method::Get, Endpoint::Console(file)) => super::console::serve(file),
        (Method::Get, Endpoint::Metrics) => own_poll(super::metrics_route::metrics(req, env)).await,
        (_, r) if r.is_admin() => own_poll(admin::handle(req, env, ctx, &dep, r)).await,
        _ => Err(ApiError::method_not_allowed()),
    };
    resp.map(Routed::Plain)
}
