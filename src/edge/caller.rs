//! The caller store on the runtime: caller keys and tenant configs through the isolate's memo
//! (`store`), D1 on a miss. Who is calling is decided by `request::identify`.

use super::deployment::Deployment;
use super::http::{header, RawRequest};
use super::metrics::Metrics;
use super::store;
use crate::api::ApiError;
use crate::config::caller_key::CallerKeyMac;
use crate::config::{CallerKey, TenantConfig, TenantId};
use crate::request::identify::{self, credential, CallerStore};
use std::rc::Rc;
use worker::{Context, Env};

/// The `CallerStore` of one request: its environment, `waitUntil`, deployment and counters.
pub(super) struct Callers<'a>(
    pub &'a Env,
    pub &'a Context,
    pub &'a Deployment,
    pub &'a Metrics,
);

impl CallerStore for Callers<'_> {
    fn mac(&self) -> Option<CallerKeyMac> {
        store::caller_key_mac(self.0)
    }

    async fn key(&self, hash: &str) -> Result<Option<CallerKey>, ApiError> {
        let Self(env, ctx, dep, metrics) = *self;
        store::caller_key(env, ctx, hash, &dep.defaults, metrics).await
    }

    async fn config(&self, tenant: &TenantId) -> Result<Option<Rc<TenantConfig>>, ApiError> {
        let Self(env, ctx, dep, metrics) = *self;
        store::tenant_config(env, ctx, tenant, &dep.defaults, metrics).await
    }
}

/// The caller of a route outside the chat surfaces, if it presents a key (`request::identify`).
pub(super) async fn caller(
    req: &impl RawRequest,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    metrics: &Metrics,
) -> Result<Option<CallerKey>, ApiError> {
    let (auth, key) = (header(req, "authorization"), header(req, "x-api-key"));
    let callers = Callers(env, ctx, dep, metrics);
    identify::caller(credential(auth.as_deref(), key.as_deref()), &callers).await
}

/// The caller key and its tenant's config; without a key, 401.
pub(super) async fn caller_config(
    req: &impl RawRequest,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    metrics: &Metrics,
) -> Result<(CallerKey, Rc<TenantConfig>), ApiError> {
    let (auth, key) = (header(req, "authorization"), header(req, "x-api-key"));
    let callers = Callers(env, ctx, dep, metrics);
    identify::identify(credential(auth.as_deref(), key.as_deref()), &callers).await
}
