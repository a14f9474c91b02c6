//! `POST /v1/messages/count_tokens`: Anthropic's token count, answered by the gateway itself.

use super::caller::caller_config;
use super::deployment::Deployment;
use super::gateway::chain_error;
use super::http;
use super::limits::count_call;
use super::metrics::Metrics;
use super::reply::with_memory_counter;
use crate::api::ApiError;
use crate::config::ModelId;
use crate::request::scope::allowed;
use crate::routing::{build_chain, pin, RouteInput};
use crate::surfaces::count_tokens::CountRequest;
use crate::surfaces::facts::count_facts;
use crate::surfaces::Surface;
use worker::{Context, Env, Request, Response};

/// `POST /v1/messages/count_tokens`: the caller key and name resolution of `/v1/messages`, then
/// the gateway's own estimate. No upstream call and no usage record; it counts against the
/// key's `rpm` as a request without tokens.
pub async fn count_tokens(
    req: Request,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
) -> Result<Response, ApiError> {
    let metrics = Metrics::default();
    let (key, cfg) = caller_config(&req, env, ctx, dep, &metrics).await?;
    // A request without tokens: it counts against the key's `rpm` before its body is read.
    if let Err(refused) = count_call(env, &key, "count_tokens", &metrics).await {
        return super::limits::denied_response(&refused, Surface::Messages);
    }
    let body = http::read_body(&req, dep.max_chat_body).await?;
    let default_model = cfg.settings.limits.default_model.as_ref();
    let count = CountRequest::parse(
        body,
        dep.max_chat_json_values,
        default_model.map(|m| m.as_str()),
    )?;
    allowed(&key, &count.model)?;
    // The `auto` names rank only what the key may use, here as on the request itself.
    let may_use = |m: &ModelId| key.policy.allows(m.as_str());
    // The pins and facts `/v1/messages` would route by, so the name resolves the same way.
    let headers = http::CallerRequest::new(Clone::clone(req.inner()));
    let header = |h: &str| crate::request::Incoming::header(&headers, h);
    let pinned = pin::parse(&cfg, header(pin::HEADER), header(pin::PLATFORM_HEADER));
    let pinned = pinned.map_err(|e| chain_error(&e))?;
    let facts = count_facts(&count, cfg.reads(), &header)?;
    let input = RouteInput {
        may_use: &may_use,
        pin: pinned.as_ref(),
        facts: facts.as_ref(),
        ..RouteInput::unmeasured()
    };
    build_chain(&cfg, &count.model, &input).map_err(|e| chain_error(&e))?;
    let resp = http::bytes(200, "application/json", count.answer())?;
    with_memory_counter(resp, dep).map_err(|_| ApiError::internal())
}
