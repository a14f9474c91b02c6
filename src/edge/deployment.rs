//! Deployment-wide settings read from `[vars]` once per isolate (they cannot change under it);
//! what each var means and its default is `request::deployment`.

use super::events::{fault, Fault};
use super::isolate::isolate;
use crate::api::ApiError;
pub use crate::request::deployment::Deployment;
use worker::Env;

fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name).ok().map(|v| v.to_string())
}

/// `ALLOW_HTTP_UPSTREAMS = "true"`: the local-development switch (plain http, and webhooks on
/// local or private hosts).
pub fn allow_http_upstreams(env: &Env) -> bool {
    crate::request::deployment::allows_http(
        var(env, crate::config::base_url::ALLOW_HTTP_VAR).as_deref(),
    )
}

/// The bench-only routing delay of this isolate (0 until the deployment vars are read).
pub fn routing_rtt_ms() -> u64 {
    isolate(|i| i.deployment.get().map_or(0, |d| d.routing_rtt_ms))
}

pub fn deployment(env: &Env) -> Result<Deployment, ApiError> {
    if let Some(d) = isolate(|i| i.deployment.get().cloned()) {
        return Ok(d);
    }
    let read = Deployment::from_vars(|n| var(env, n), super::live_stats::DEFAULT_FLUSH_MS);
    let d = read.map_err(|e| {
        fault(Fault::InvalidDeploymentVars { error: &e });
        ApiError::internal()
    })?;
    isolate(|i| {
        let _ = i.deployment.set(d.clone());
    });
    Ok(d)
}
