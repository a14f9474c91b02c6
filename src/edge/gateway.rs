//! Caller routes: every chat surface through the request's order (`request::serve`).

use super::deployment::Deployment;
use super::http::{now_ms, random_bytes, CallerRequest};
use super::metrics::Metrics;
use super::ports::RequestPorts;
use crate::api::ApiError;
use crate::cascade::Clock;
use crate::request::{self, BodyLimits, Deployed};
use crate::routing::ChainError;
use crate::surfaces::Surface;
use worker::{web_sys, Context, Env, Response};

pub(super) struct WorkerClock;

impl Clock for WorkerClock {
    fn now_ms(&self) -> u64 {
        now_ms()
    }

    async fn sleep(&self, ms: u64) {
        worker::Delay::from(std::time::Duration::from_millis(ms)).await;
    }

    fn random(&self) -> u64 {
        // No randomness to be had: the longest delay, never a synchronized zero.
        random_bytes::<8>().map_or(u64::MAX, u64::from_le_bytes)
    }
}

pub fn new_request_id() -> String {
    random_bytes::<8>()
        .map(|b| format!("req_{}", ::hex::encode(b)))
        .unwrap_or_else(|_| "req_unknown".to_owned())
}

pub(super) fn chain_error(e: &ChainError) -> ApiError {
    e.api_error()
}

/// Every caller surface (chat completions, Messages, Responses, embeddings): the same
/// resolution, chain, cascade, headers and log line; only the request and answer are translated.
pub async fn serve(
    surface: Surface,
    req: web_sys::Request,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    request_id: &str,
) -> worker::Result<Response> {
    let req = CallerRequest::new(req);
    let metrics = Metrics::default();
    let ports = RequestPorts::new(env, ctx, dep, &metrics);
    let at = Deployed {
        body: BodyLimits {
            bytes: dep.max_chat_body,
            values: dep.max_chat_json_values,
        },
        request_budget_ms: dep.defaults.request_budget_ms,
        lease_ms: dep.lease_ms,
        max_park_ms: dep.max_park_ms,
        debug_counters: dep.debug_counters,
    };
    let reply = request::serve(&ports, &req, (surface, request_id), &at).await;
    super::reply::respond(reply, &ports, request_id)
}
