//! What a caller's answer carries besides its body: who served it (`X-CogniGate-Model`,
//! `-Provider`, `-Fallback-Depth`), what it cost, the refusal fallback's `-Policy-Fallback`, the
//! stream headers, the aggregated 502's `Retry-After`, and the debug counters tests and
//! benchmarks read.

use super::deployment::Deployment;
use super::http::{self, now_ms, HttpReply};
use super::js_fetch;
use super::metrics::Metrics;
use crate::api::ApiError;
use crate::cascade::{
    exhausted_error, exhausted_retry_after_secs, CandidateAttempt, PolicyFallback,
};
use crate::surfaces::Surface;
use worker::{web_sys, Response, ResponseBody};

/// The aggregated 502, with `Retry-After` when every attempt's reason has a known end.
pub(super) fn exhausted(attempts: &[CandidateAttempt], surface: Surface) -> HttpReply {
    let resp =
        http::error_in(surface, &exhausted_error(attempts)).map_err(|_| ApiError::internal())?;
    if let Some(secs) = exhausted_retry_after_secs(attempts, now_ms()) {
        let set = resp.headers().set("retry-after", &secs.to_string());
        set.map_err(|_| ApiError::internal())?;
    }
    Ok(resp)
}

pub(super) struct ServedBy<'a> {
    pub depth: usize,
    pub model: &'a str,
    pub provider: &'a str,
    pub truncated: Option<usize>,
    /// `X-CogniGate-Cost-Usd`: non-streamed answers, at the reported usage or else the estimate.
    pub cost_usd: Option<String>,
    /// `X-CogniGate-Cache-Affinity`: `hit` or `miss` when the requested name has affinity.
    pub cache_affinity: Option<&'static str>,
    /// `X-CogniGate-Policy-Fallback`: only when a safety refusal was seen.
    pub policy_fallback: Option<PolicyFallback>,
}

pub(super) fn stream_response(
    status: u16,
    body: impl futures::Stream<Item = worker::Result<Vec<u8>>> + 'static,
) -> HttpReply {
    event_stream(status, Response::from_stream(body))
}

/// A stream the runtime already has (a relay's readable side) as the caller's SSE answer.
pub(super) fn piped_response(
    status: u16,
    body: worker::Result<web_sys::ReadableStream>,
) -> HttpReply {
    event_stream(
        status,
        body.and_then(|b| Response::from_body(ResponseBody::Stream(b))),
    )
}

fn event_stream(status: u16, resp: worker::Result<Response>) -> HttpReply {
    let resp = resp.map_err(|_| ApiError::internal())?.with_status(status);
    let h = resp.headers();
    for (k, v) in [
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
    ] {
        h.set(k, v).map_err(|_| ApiError::internal())?;
    }
    Ok(resp)
}

pub(super) fn with_served_headers(
    resp: Response,
    by: &ServedBy<'_>,
    metrics: &Metrics,
    dep: &Deployment,
) -> HttpReply {
    let depth = by.depth.to_string();
    let truncated = by.truncated.map(|dropped| dropped.to_string());
    let mut pairs = vec![
        ("x-cognigate-fallback-depth", depth.as_str()),
        ("x-cognigate-model", by.model),
        ("x-cognigate-provider", by.provider),
    ];
    let optional = [
        ("x-cognigate-truncated", truncated.as_deref()),
        ("x-cognigate-cost-usd", by.cost_usd.as_deref()),
        ("x-cognigate-cache-affinity", by.cache_affinity),
        (
            "x-cognigate-policy-fallback",
            by.policy_fallback.map(|f| f.as_str()),
        ),
    ];
    pairs.extend(optional.iter().filter_map(|(k, v)| v.map(|v| (*k, v))));
    let counters = debug_pairs(metrics, dep);
    pairs.extend(counters.iter().map(|(k, v)| (*k, v.as_str())));
    set_all(&resp, &pairs)?;
    Ok(resp)
}

/// The D1 and Durable Object counters tests and benchmarks read (`DEBUG_COUNTERS`).
pub(super) fn debug_counters(resp: Response, metrics: &Metrics, dep: &Deployment) -> HttpReply {
    let counters = debug_pairs(metrics, dep);
    let pairs: Vec<_> = counters.iter().map(|(k, v)| (*k, v.as_str())).collect();
    set_all(&resp, &pairs)?;
    Ok(resp)
}

fn debug_pairs(metrics: &Metrics, dep: &Deployment) -> Vec<(&'static str, String)> {
    if !dep.debug_counters {
        return Vec::new();
    }
    vec![
        ("x-cognigate-d1-queries", metrics.d1_queries().to_string()),
        (
            "x-cognigate-do-calls",
            metrics.durable_object_calls().to_string(),
        ),
    ]
}

/// The answer's headers set in one crossing (`js_fetch::set_all`).
fn set_all(resp: &Response, pairs: &[(&str, &str)]) -> Result<(), ApiError> {
    js_fetch::set_all(&resp.headers().0, pairs).map_err(|_| ApiError::internal())
}

/// The request-id headers are set on every answer by `entry`; this adds the debug memory counter.
pub(super) fn with_memory_counter(resp: Response, dep: &Deployment) -> worker::Result<Response> {
    if dep.debug_counters {
        // Wasm memory never shrinks, so this is the isolate's peak so far (tests read it).
        resp.headers().set(
            "x-cognigate-wasm-memory-bytes",
            &wasm_memory_bytes().to_string(),
        )?;
    }
    Ok(resp)
}

fn wasm_memory_bytes() -> usize {
    core::arch::wasm32::memory_size(0) * 65_536
}
