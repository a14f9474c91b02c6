//! The Durable Object holding one tenant/provider's routing state (key parks, round-robin cursor,
//! per-model breakers), and the client the cascade uses to reach it.

use super::http::now_ms;
use super::metrics::Metrics;
use super::store;
use crate::cascade::RoutingState;
use crate::config::{ProviderName, TenantId};
use crate::state::provider_state::ModelTransition;
use crate::state::{
    AcquireRequest, Admission, BreakerView, Lease, LocalGrant, ProviderState, ReportRequest,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use worker::{
    console_error, console_log, durable_object, Context, DurableObject, Env, Headers, Method,
    Request, RequestInit, Response, Result, State,
};

const STORAGE_KEY: &str = "state";

#[durable_object]
pub struct RoutingObject {
    state: State,
    mem: RefCell<Option<ProviderState>>,
}

#[derive(Serialize, Deserialize)]
pub struct ResetRequest {
    pub model: Option<String>,
}

impl DurableObject for RoutingObject {
    fn new(state: State, _env: Env) -> Self {
        Self {
            state,
            mem: RefCell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        self.ensure_loaded().await?;
        let now = now_ms();
        match (req.method(), req.path().as_str()) {
            (Method::Post, "/acquire") => {
                let body: AcquireRequest = req.json().await?;
                let lease = self.update(|st| st.acquire(&body, now));
                // Only the move to half-open must survive eviction; the cursor may restart.
                if matches!(lease.admission, Admission::Probe { .. }) {
                    self.persist().await?;
                }
                Response::from_json(&lease)
            }
            (Method::Post, "/report") => {
                let body: ReportRequest = req.json().await?;
                let transitions = self.update(|st| st.report(&body, now));
                self.persist().await?;
                Response::from_json(&transitions)
            }
            (Method::Post, "/reset") => {
                let body: ResetRequest = req.json().await?;
                let transitions = self.update(|st| st.reset(body.model.as_deref()));
                self.persist().await?;
                Response::from_json(&transitions)
            }
            (Method::Get, "/breakers") => {
                Response::from_json(&self.update(|st| st.not_closed(now)))
            }
            (Method::Post, "/wipe") => {
                self.update(|st| *st = ProviderState::default());
                self.state.storage().delete_all().await?;
                Response::from_json(&Vec::<ModelTransition>::new())
            }
            _ => Response::error("no such routing-object route", 404),
        }
    }
}

impl RoutingObject {
    /// Loads the stored state once per object lifetime.
    async fn ensure_loaded(&self) -> Result<()> {
        if self.mem.borrow().is_some() {
            return Ok(());
        }
        let stored: Option<ProviderState> = self.state.storage().get(STORAGE_KEY).await?;
        let mut mem = self.mem.borrow_mut();
        // Storage reads hold the input gate, but keep whatever a concurrent first request loaded.
        if mem.is_none() {
            *mem = Some(stored.unwrap_or_default());
        }
        Ok(())
    }

    /// Every decision is made on the in-memory state without an await in between, so concurrent
    /// requests see each other's effects at once (one probe, one cursor step each).
    fn update<R>(&self, f: impl FnOnce(&mut ProviderState) -> R) -> R {
        let mut mem = self.mem.borrow_mut();
        f(mem.get_or_insert_with(ProviderState::default))
    }

    async fn persist(&self) -> Result<()> {
        let snapshot = self.mem.borrow().clone().unwrap_or_default();
        self.state.storage().put(STORAGE_KEY, &snapshot).await
    }
}

/// The cascade's `RoutingState` port over the object's fetch interface. It fails open: if the
/// object cannot be reached, the candidate is tried with its keys in configured order, because a
/// routing-state outage must not become a gateway outage.
pub struct RoutingClient<'a> {
    pub env: &'a Env,
    pub ctx: &'a Context,
    pub tenant: &'a TenantId,
    pub metrics: &'a Metrics,
}

impl RoutingClient<'_> {
    async fn call<T: DeserializeOwned>(
        &self,
        provider: &str,
        method: Method,
        path: &str,
        body: Option<String>,
    ) -> Result<T> {
        self.metrics.durable_object_call();
        call_object(self.env, self.tenant, provider, method, path, body).await
    }

    fn record(&self, provider: &ProviderName, transitions: Vec<ModelTransition>) {
        record_transitions(
            self.env,
            self.ctx,
            self.tenant,
            provider.as_str(),
            transitions,
        );
    }
}

pub async fn call_object<T: DeserializeOwned>(
    env: &Env,
    tenant: &TenantId,
    provider: &str,
    method: Method,
    path: &str,
    body: Option<String>,
) -> Result<T> {
    let stub = env
        .durable_object("ROUTING")?
        .get_by_name(&format!("{tenant}/{provider}"))?;
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    let mut init = RequestInit::new();
    init.with_method(method)
        .with_headers(headers)
        .with_body(body.map(Into::into));
    let req = Request::new_with_init(&format!("https://routing{path}"), &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        return Err(worker::Error::RustError(format!(
            "routing object answered {}",
            resp.status_code()
        )));
    }
    resp.json().await
}

/// Logs each breaker transition as a structured line and stores it as an event record.
pub fn record_transitions(
    env: &Env,
    ctx: &Context,
    tenant: &TenantId,
    provider: &str,
    transitions: Vec<ModelTransition>,
) {
    for t in transitions {
        let (kind, at, body) = transition_event(tenant, provider, &t);
        let (env, tenant) = (env.clone(), tenant.to_string());
        ctx.wait_until(async move { store::insert_event(&env, &tenant, &kind, at, &body).await });
    }
}

type GrantKey = (String, String, String);

thread_local! {
    /// This isolate's admission grants, by tenant, provider and model.
    static GRANTS: RefCell<HashMap<GrantKey, LocalGrant>> = RefCell::new(HashMap::new());
}

fn grant_key(tenant: &TenantId, provider: &str, model: &str) -> GrantKey {
    (tenant.to_string(), provider.to_owned(), model.to_owned())
}

/// Anything this isolate reports about a provider ends its grants there: from then on the
/// routing object decides again, with what was just reported.
fn drop_grants(tenant: &TenantId, provider: &str) {
    GRANTS.with(|g| {
        g.borrow_mut()
            .retain(|(t, p, _), _| !(t == tenant.as_str() && p == provider))
    });
}

impl RoutingState for RoutingClient<'_> {
    async fn acquire(&self, provider: &ProviderName, req: AcquireRequest) -> Lease {
        let key = grant_key(self.tenant, provider.as_str(), &req.model);
        let granted = GRANTS.with(|g| {
            g.borrow_mut()
                .get_mut(&key)
                .and_then(|grant| grant.take(&req.keys, req.strategy, now_ms()))
        });
        if let Some(keys) = granted {
            return Lease {
                admission: Admission::Pass,
                keys,
                grant: None,
            };
        }
        let lease = self.acquire_from_object(provider, req).await;
        if let Some(grant) = lease.grant {
            GRANTS.with(|g| g.borrow_mut().insert(key, LocalGrant::new(grant)));
        }
        lease
    }

    async fn report(&self, provider: &ProviderName, req: ReportRequest) {
        drop_grants(self.tenant, provider.as_str());
        self.metrics.durable_object_call();
        let transitions = send_report(self.env, self.tenant, provider, &req).await;
        self.record(provider, transitions);
    }
}

impl RoutingClient<'_> {
    async fn acquire_from_object(&self, provider: &ProviderName, req: AcquireRequest) -> Lease {
        let body = serde_json::to_string(&req).ok();
        match self
            .call(provider.as_str(), Method::Post, "/acquire", body)
            .await
        {
            Ok(lease) => lease,
            Err(e) => {
                console_error!(
                    "{}",
                    serde_json::json!({"msg": "routing object unreachable, failing open", "provider": provider, "error": e.to_string()})
                );
                Lease {
                    admission: Admission::Pass,
                    keys: req.keys,
                    grant: None,
                }
            }
        }
    }
}

/// Sends a report; a lost report is logged, never fatal (the state it carried is advisory).
async fn send_report(
    env: &Env,
    tenant: &TenantId,
    provider: &ProviderName,
    req: &ReportRequest,
) -> Vec<ModelTransition> {
    let body = serde_json::to_string(req).ok();
    match call_object(
        env,
        tenant,
        provider.as_str(),
        Method::Post,
        "/report",
        body,
    )
    .await
    {
        Ok(transitions) => transitions,
        Err(e) => {
            console_error!(
                "{}",
                serde_json::json!({"msg": "routing report lost", "provider": provider, "error": e.to_string()})
            );
            Vec::new()
        }
    }
}

/// A report sent after the response has left (a stream's end): transitions are logged and
/// stored inline, as there is no request context to defer them to.
pub async fn report_detached(
    env: &Env,
    tenant: &TenantId,
    provider: &ProviderName,
    req: ReportRequest,
) {
    if !req.changes_anything() {
        return;
    }
    drop_grants(tenant, provider.as_str());
    for t in send_report(env, tenant, provider, &req).await {
        let (kind, at, body) = transition_event(tenant, provider.as_str(), &t);
        store::insert_event(env, tenant.as_str(), &kind, at, &body).await;
    }
}

/// The structured log line of a transition (logged here) and its stored form.
fn transition_event(
    tenant: &TenantId,
    provider: &str,
    t: &ModelTransition,
) -> (String, u64, String) {
    let at = now_ms();
    let mut event = serde_json::json!(t);
    let kind = event
        .get("event")
        .and_then(|k| k.as_str())
        .unwrap_or("breaker")
        .to_owned();
    if let Some(obj) = event.as_object_mut() {
        obj.insert("tenant".into(), tenant.as_str().into());
        obj.insert("provider".into(), provider.into());
        obj.insert("time".into(), at.into());
    }
    console_log!("{}", event);
    (kind, at, event.to_string())
}

/// Every breaker of `provider` that is not closed.
pub async fn breakers(env: &Env, tenant: &TenantId, provider: &str) -> Result<Vec<BreakerView>> {
    call_object(env, tenant, provider, Method::Get, "/breakers", None).await
}
