//! The admin route on the worker: authenticate, read the body, and run the admin core
//! (`crate::admin`) over D1 and the routing objects; after a successful write, drop this
//! isolate's cached config for the tenant.

use super::d1::{logged, storage_error, Db};
use super::deployment::Deployment;
use super::http::{self, header, now_ms, HttpReply};
use super::routing_object::{call_object, record_transitions, ResetRequest};
use super::store;
use crate::admin::store::{LedgerControl, StoreError, Stored};
use crate::admin::{
    Admin, CommandError, Context as AdminContext, ExplainControl, Reply, RoutingControl, Verb,
};
use crate::api::{ApiError, Endpoint};
use crate::config::SortedMap;
use crate::config::{ModelId, ProviderName, TenantConfig, TenantId};
use crate::health::provider_state::ModelTransition;
use crate::routing::stats::routing_snapshot::RoutingSnapshot;
use crate::routing::stats::stats_book::StatsSnapshot;
use crate::usage::spend::Spend;
use std::rc::Rc;
use worker::{Context, Env, Method, Request};

pub(super) fn authorize(req: &Request, env: &Env) -> Result<(), ApiError> {
    let admin_key = env.secret("CG_ADMIN").map(|s| s.to_string());
    let given = header(req, "authorization");
    crate::admin::access::authorize(given.as_deref(), &admin_key.unwrap_or_default())
}

pub async fn handle(
    req: Request,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    route: Endpoint,
) -> HttpReply {
    authorize(&req, env)?;
    let verb = Verb::of_method(req.method().as_ref());
    let body = match verb {
        Verb::Post | Verb::Put | Verb::Patch => http::read_body(&req, dep.max_admin_body).await?,
        _ => Vec::new(),
    };
    let query = req.url().ok().and_then(|u| u.query().map(str::to_owned));
    let db = Db::open(env).map_err(logged)?;
    let kek = store::kek(env)?;
    let routing = ObjectRouting { env, ctx, dep };
    let random = |buf: &mut [u8]| getrandom::getrandom(buf).is_ok();
    let cx = AdminContext {
        now: now_ms(),
        defaults: &dep.defaults,
        allow_http_upstreams: dep.allow_http_upstreams,
        kek: kek.as_ref(),
        random: &random,
    };
    let written = route.tenant().cloned();
    let answer = Admin::new(&db, &routing, cx)
        .handle(verb, route, &body, query.as_deref())
        .await;
    if answer.is_ok() && verb != Verb::Get {
        if let Some(t) = written {
            store::invalidate_tenant(&t);
        }
    }
    match answer {
        Ok(Reply::Json(status, body)) => http::bytes(status, "application/json", body),
        Ok(Reply::OpenApi(doc)) => http::bytes(200, "application/json", doc.as_bytes().to_vec()),
        Err(CommandError::Api(e)) => Err(e),
        Err(CommandError::Store(e)) => Err(logged(e)),
    }
}

/// The tenant's ledger object as the admin core's `LedgerControl`.
impl LedgerControl for ObjectRouting<'_> {
    async fn spend(&self, t: &TenantId, keys: &[String]) -> Stored<SortedMap<String, Spend>> {
        super::ledger_client::spend(self.env, t, keys)
            .await
            .map_err(|e| StoreError::new("key spend", e))
    }

    async fn wipe_ledger(&self, t: &TenantId) {
        if let Err(e) = super::ledger_client::wipe(self.env, t).await {
            storage_error("wipe ledger", e);
        }
    }
}

/// The routing objects as the admin core's `RoutingControl`.
struct ObjectRouting<'a> {
    env: &'a Env,
    ctx: &'a Context,
    dep: &'a Deployment,
}

/// `explain`'s reads: the config the request path uses (this isolate's cache, as a request
/// would find it) and one read-only `/snapshot` per provider.
impl ExplainControl for ObjectRouting<'_> {
    async fn route_config(&self, t: &TenantId) -> Result<Option<Rc<TenantConfig>>, CommandError> {
        let metrics = super::metrics::Metrics::default();
        store::tenant_config(self.env, self.ctx, t, &self.dep.defaults, &metrics)
            .await
            .map_err(CommandError::Api)
    }

    async fn snapshots(
        &self,
        t: &TenantId,
        providers: &[ProviderName],
    ) -> Stored<SortedMap<String, RoutingSnapshot>> {
        let reads = providers.iter().map(|p| async move {
            let read: worker::Result<RoutingSnapshot> =
                call_object(self.env, t, p.as_str(), Method::Get, "/snapshot", None).await;
            read.map(|s| (p.to_string(), s))
        });
        futures::future::join_all(reads)
            .await
            .into_iter()
            .collect::<worker::Result<_>>()
            .map_err(|e| StoreError::new("routing snapshot", e))
    }
}

impl RoutingControl for ObjectRouting<'_> {
    async fn wipe(&self, t: &TenantId, provider: &ProviderName) {
        let wiped: worker::Result<Vec<ModelTransition>> =
            call_object(self.env, t, provider.as_str(), Method::Post, "/wipe", None).await;
        if let Err(e) = wiped {
            storage_error("wipe routing state", e);
        }
    }

    async fn reset(
        &self,
        t: &TenantId,
        provider: &ProviderName,
        model: Option<&ModelId>,
    ) -> Stored<Vec<ModelId>> {
        // This isolate's own grants and skips end at once; other isolates see the reset within
        // their lease.
        super::local_grants::news_for_tenant(t);
        super::open_breakers::forget_tenant(t);
        let request = serde_json::to_string(&ResetRequest {
            model: model.cloned(),
        })
        .ok();
        let p = provider.as_str();
        let transitions: Vec<ModelTransition> =
            call_object(self.env, t, p, Method::Post, "/reset", request)
                .await
                .map_err(|e| StoreError::new("reset breakers", e))?;
        let closed = transitions.iter().map(|tr| tr.model.clone()).collect();
        record_transitions(self.env, self.ctx, t, p, transitions);
        Ok(closed)
    }

    async fn stats(
        &self,
        t: &TenantId,
        providers: &[ProviderName],
    ) -> Stored<SortedMap<String, StatsSnapshot>> {
        Ok(super::live_stats::read_tenant(self.env, t, providers.iter()).await)
    }
}
