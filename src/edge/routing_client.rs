//! The client side of the routing object: the cascade's `RoutingState` port and this isolate's
//! admission grants. The report a streamed answer still owes is `stream_report.rs`.

use super::events::{fault, Alert, ConsoleEvents, Event, EventSink, Fault};
use super::http::now_ms;
use super::local_grants::{in_flight, lead, news, with_grants};
use super::metrics::Metrics;

use crate::cascade::RoutingState;
use crate::config::{ProviderName, TenantId};
use crate::health::provider_state::ModelTransition;
use crate::health::provider_state::PassView;
use crate::health::{jittered, AcquireRequest, Gate, Lease, LocalAdmission, ReportRequest};
use crate::routing::stats::isolate_stats::ProviderStats;
use crate::routing::stats::stats_book::{AcquireAnswer, AcquireCall, ReportAnswer, ReportCall};
use serde::de::DeserializeOwned;
use std::time::Duration;
use worker::{Context, Delay, Env, Headers, Method, Request, RequestInit, Result};

pub use super::stream_report::{StreamReport, StreamReportTarget};

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
    let rtt = super::deployment::routing_rtt_ms();
    if rtt > 0 {
        Delay::from(Duration::from_millis(rtt)).await;
    }
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
        ctx.wait_until(
            async move { super::alerts::publish(&env, &tenant, &kind, at, &body).await },
        );
    }
}

/// How often a request waiting for another's acquire of the same candidate looks again, and the
/// longest it waits before asking for itself.
const FLIGHT_POLL_MS: u64 = 2;
const MAX_FLIGHT_WAIT_MS: u64 = 500;

impl RoutingState for RoutingClient<'_> {
    async fn acquire(&self, provider: &ProviderName, req: AcquireRequest) -> Lease {
        if req.lease_ms == 0 {
            return self.acquire_from_object(provider, req).await;
        }
        if let Some(lease) = self.decide_locally(provider, &req) {
            return lease;
        }
        let leader = match lead(self.tenant, provider.as_str(), req.model.as_str()) {
            Some(leader) => Some(leader),
            None => {
                if let Some(lease) = self.wait_for_leader(provider, &req).await {
                    return lease;
                }
                None
            }
        };
        let ticket = with_grants(self.tenant, provider.as_str(), |book| book.ticket());
        let (model, lease_ms) = (req.model.clone(), req.lease_ms);
        let lease = self.acquire_from_object(provider, req).await;
        let now = now_ms();
        with_grants(self.tenant, provider.as_str(), |book| {
            match (&lease.admission, lease.grant) {
                (_, Some(grant)) => {
                    let random = super::http::random_bytes::<4>().map_or(0, u32::from_le_bytes);
                    book.install(&model, jittered(grant, now, random), ticket)
                }
                (Gate::Skip { until: Some(until) }, None) => {
                    book.install_skip(&model, *until, now, lease_ms, ticket)
                }
                _ => false,
            }
        });
        drop(leader);
        lease
    }

    async fn report(&self, provider: &ProviderName, req: ReportRequest) {
        self.metrics.durable_object_call();
        let transitions = send_report(self.env, self.tenant, provider, &req).await;
        self.record(provider, transitions);
    }

    fn with_stats(&self, provider: &ProviderName, f: &mut dyn FnMut(&mut ProviderStats)) {
        super::live_stats::with_stats(self.tenant, provider.as_str(), f);
    }
}

impl RoutingClient<'_> {
    /// A grant or skip this isolate holds for the candidate, as a lease, without a round trip.
    fn decide_locally(&self, provider: &ProviderName, req: &AcquireRequest) -> Option<Lease> {
        let local = with_grants(self.tenant, provider.as_str(), |book| {
            book.take(&req.model, &req.keys, req.strategy, now_ms())
        })?;
        Some(match local {
            LocalAdmission::Admit(keys) => Lease::pass(keys),
            LocalAdmission::Skip { breaker_until } => Lease {
                admission: Gate::Skip {
                    until: Some(breaker_until),
                },
                keys: Vec::new(),
                grant: None,
            },
        })
    }

    /// Polls, on this request's own timer, until the leading request's answer is in (a grant or
    /// skip for this candidate, or nothing for it: then it asks itself) or the wait is too long.
    async fn wait_for_leader(
        &self,
        provider: &ProviderName,
        req: &AcquireRequest,
    ) -> Option<Lease> {
        let started = now_ms();
        while in_flight(self.tenant, provider.as_str(), req.model.as_str())
            && now_ms().saturating_sub(started) < MAX_FLIGHT_WAIT_MS
        {
            Delay::from(Duration::from_millis(FLIGHT_POLL_MS)).await;
            if let Some(lease) = self.decide_locally(provider, req) {
                return Some(lease);
            }
        }
        self.decide_locally(provider, req)
    }

    /// With grants on, the acquire renewing one carries this isolate's pending outcomes and
    /// brings the provider's stats back. In the strict mode (an acquire per candidate) it only
    /// asks for the snapshot: a batch would add a storage write to every request's round trip,
    /// and the timed flush sends it instead.
    async fn acquire_from_object(&self, provider: &ProviderName, req: AcquireRequest) -> Lease {
        let p = provider.as_str();
        let taken = match req.lease_ms {
            0 => None,
            _ => super::live_stats::take(self.tenant, p),
        };
        let call = AcquireCall {
            stats: Some(taken.clone().unwrap_or_default()),
            acquire: req,
        };
        let body = serde_json::to_string(&call).ok();
        let req = call.acquire;
        let answer: Result<AcquireAnswer> = self.call(p, Method::Post, "/acquire", body).await;
        let stats = answer.as_ref().ok().and_then(|a| a.stats.clone());
        super::live_stats::answered(self.tenant, p, taken.is_some(), stats);
        match answer.map(|a| a.lease) {
            Ok(lease) => lease,
            Err(e) => {
                fault(Fault::RoutingObjectUnreachable {
                    provider: p,
                    error: &e,
                });
                Lease::pass(req.keys)
            }
        }
    }
}

/// Sends a report; a lost report is logged, never fatal (the state it carried is advisory).
pub(super) async fn send_report(
    env: &Env,
    tenant: &TenantId,
    provider: &ProviderName,
    req: &ReportRequest,
) -> Vec<ModelTransition> {
    let p = provider.as_str();
    news(tenant, p);
    // The report carries this isolate's pending outcomes of the provider.
    let taken = super::live_stats::take(tenant, p);
    let body = serde_json::to_string(&ReportCall {
        report: req,
        stats: taken.as_ref(),
    })
    .ok();
    let sent: Result<ReportAnswer> =
        call_object(env, tenant, p, Method::Post, "/report", body).await;
    news(tenant, p);
    let (sent, stats) = match sent {
        Ok(answer) => (Ok(answer.transitions()), answer.stats()),
        Err(e) => (Err(e), None),
    };
    super::live_stats::answered(tenant, p, taken.is_some(), stats);
    match sent {
        // This isolate's routing learns the breakers its reports open.
        Ok(transitions) => super::open_breakers::learned(tenant, provider, transitions),
        Err(e) => {
            fault(Fault::RoutingReportLost {
                provider: p,
                model: req.model.as_str(),
                verdict: &req.verdict,
                error: &e,
            });
            Vec::new()
        }
    }
}

/// The structured log line of a transition (logged here) and its stored form.
pub(super) fn transition_event(
    tenant: &TenantId,
    provider: &str,
    t: &ModelTransition,
) -> (String, u64, String) {
    let at = now_ms();
    let alert = Alert::Breaker {
        tenant: tenant.as_str(),
        provider,
        transition: t,
        time: at,
    };
    let kind = alert.kind().to_owned();
    let event = Event::Alert(alert);
    ConsoleEvents.emit(&event);
    (kind, at, event.to_line())
}

/// The provider as the scheduled pass and `/v1/providers/health` read it.
pub async fn pass_view(env: &Env, tenant: &TenantId, provider: &ProviderName) -> Result<PassView> {
    call_object(
        env,
        tenant,
        provider.as_str(),
        Method::Get,
        "/pass_view",
        None,
    )
    .await
}
