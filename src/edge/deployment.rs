//! Deployment-wide settings read from `[vars]` once per isolate (they cannot change under it).

use super::events::{fault, Fault};
use super::isolate::isolate;
use crate::api::ApiError;
use crate::config::Defaults;
use worker::Env;

#[derive(Debug, Clone)]
pub struct Deployment {
    pub defaults: Defaults,
    pub max_chat_body: usize,
    pub max_admin_body: usize,
    /// `MAX_CHAT_JSON_VALUES`: a chat body with more JSON values is refused before parsing.
    pub max_chat_json_values: usize,
    /// Adds `X-CogniGate-D1-Queries` / `-DO-Calls` to responses (tests and benchmarks).
    pub debug_counters: bool,
    /// `ROUTING_LEASE_MS`: how long an admission grant or skip lasts; 0 asks the routing object
    /// about every candidate (the strict mode).
    pub lease_ms: u64,
    /// `ALLOW_HTTP_UPSTREAMS = "true"`: providers may be called over plain http (local vLLM or
    /// Ollama, the tests). Off by default, so provider keys only travel over TLS.
    pub allow_http_upstreams: bool,
    /// `ROUTING_RTT_MS` (benchmarks only): every routing-object call waits this long first, to
    /// show what a production round trip to an object in another location costs.
    pub routing_rtt_ms: u64,
    /// `MAX_PARK_MS`: the longest a `Retry-After` parks a key.
    pub max_park_ms: u64,
    /// `LIVE_STATS_FLUSH_MS`: how long an isolate's outcomes wait before a timed flush sends them
    /// to the routing object (when no acquire or report carried them first).
    pub stats_flush_ms: u64,
}

fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name).ok().map(|v| v.to_string())
}

/// `ALLOW_HTTP_UPSTREAMS = "true"`: the local-development switch (plain http, and webhooks on
/// local or private hosts).
pub fn allow_http_upstreams(env: &Env) -> bool {
    var(env, crate::config::base_url::ALLOW_HTTP_VAR).is_some_and(|v| v.trim() == "true")
}

fn size(env: &Env, name: &str, default: usize) -> Result<usize, String> {
    match var(env, name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("var {name} must be a positive integer")),
    }
}

/// Grants by default: chosen with `bench/capacity.py` (a hot tenant/provider at 10,000 req/s
/// over 1,000 isolates keeps its routing object under 1,000 req/s) and `make bench`.
pub const DEFAULT_LEASE_MS: u64 = 1_500;

fn whole_ms(env: &Env, name: &str, default: u64) -> Result<u64, String> {
    match var(env, name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("var {name} must be a whole number of ms")),
    }
}

fn read(env: &Env) -> Result<Deployment, String> {
    Ok(Deployment {
        defaults: Defaults::from_vars(|name| var(env, name))?,
        max_chat_body: size(env, "MAX_CHAT_BODY_BYTES", 10 * 1024 * 1024)?,
        max_admin_body: size(env, "MAX_ADMIN_BODY_BYTES", 64 * 1024)?,
        max_chat_json_values: size(
            env,
            "MAX_CHAT_JSON_VALUES",
            crate::api::chat::DEFAULT_MAX_JSON_VALUES,
        )?,
        debug_counters: var(env, "DEBUG_COUNTERS").is_some_and(|v| v == "true" || v == "1"),
        allow_http_upstreams: allow_http_upstreams(env),
        lease_ms: whole_ms(env, "ROUTING_LEASE_MS", DEFAULT_LEASE_MS)?,
        routing_rtt_ms: whole_ms(env, "ROUTING_RTT_MS", 0)?,
        stats_flush_ms: whole_ms(
            env,
            "LIVE_STATS_FLUSH_MS",
            super::live_stats::DEFAULT_FLUSH_MS,
        )?,
        max_park_ms: match var(env, "MAX_PARK_MS") {
            None => 3_600_000,
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|ms| (1..=crate::health::MAX_SAFE_MS).contains(ms))
                .ok_or("var MAX_PARK_MS must be a positive whole number of ms")?,
        },
    })
}

/// The bench-only routing delay of this isolate (0 until the deployment vars are read).
pub fn routing_rtt_ms() -> u64 {
    isolate(|i| i.deployment.get().map_or(0, |d| d.routing_rtt_ms))
}

pub fn deployment(env: &Env) -> Result<Deployment, ApiError> {
    if let Some(d) = isolate(|i| i.deployment.get().cloned()) {
        return Ok(d);
    }
    let d = read(env).map_err(|e| {
        fault(Fault::InvalidDeploymentVars { error: &e });
        ApiError::internal()
    })?;
    isolate(|i| {
        let _ = i.deployment.set(d.clone());
    });
    Ok(d)
}
