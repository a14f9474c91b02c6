//! One tenant's visit by the scheduled pass: each breaker past its open duration gets
//! its single half-open probe (a minimal chat request, `max_tokens: 1`, through the cascade, the
//! upstream port and the classification user traffic takes), then the tenant's degraded mode is
//! decided from its providers' state and stored with its config.

use super::alerts::publish;
use super::d1::{logged, Db};
use super::deployment::Deployment;
use super::events::{fault, Alert, Event, Fault};
use super::gateway::WorkerClock;
use super::routing_client::{call_object, send_report, transition_event};
use super::routing_object::PassView;
use super::upstream::FetchUpstream;
use crate::cascade::{send_owed, Cascade, Ending, Limits, RoutingState};
use crate::config::{CatalogModel, Provider, ProviderName, TenantConfig, TenantId};
use crate::health::degraded::{provider_usable, DegradedMode, ProviderCount};
use crate::health::provider_state::BreakerStatus;
use crate::health::{AcquireRequest, Gate, Lease, ReportRequest};
use crate::routing::Candidate;
use crate::surfaces::{Inbound, Surface};
use worker::{Env, Method};

/// The routing port of a scheduled probe: its acquire takes the breaker's one probe slot or
/// skips (`/probe`, never a plain admission); its report is a user request's, and the
/// transitions it causes are events like theirs.
struct ProbeState<'a> {
    env: &'a Env,
    tenant: &'a TenantId,
}

impl RoutingState for ProbeState<'_> {
    async fn acquire(&self, provider: &ProviderName, req: AcquireRequest) -> Lease {
        let body = serde_json::to_string(&req).ok();
        let lease: worker::Result<Lease> = call_object(
            self.env,
            self.tenant,
            provider.as_str(),
            Method::Post,
            "/probe",
            body,
        )
        .await;
        // Unreachable: no probe. A scheduled probe never fails open.
        lease.unwrap_or(Lease {
            admission: Gate::Skip { until: None },
            keys: Vec::new(),
            grant: None,
        })
    }

    async fn report(&self, provider: &ProviderName, req: ReportRequest) {
        for t in send_report(self.env, self.tenant, provider, &req).await {
            let (kind, at, body) = transition_event(self.tenant, provider.as_str(), &t);
            publish(self.env, self.tenant.as_str(), &kind, at, &body).await;
        }
    }
}

pub async fn visit(
    env: &Env,
    dep: &Deployment,
    db: &Db,
    tenant: TenantId,
    mode: Option<&str>,
    now: u64,
) {
    let cfg = match super::store::load_config(env, &tenant, &dep.defaults).await {
        Ok(Some(cfg)) => cfg,
        // Deleted: retention drops its watch.
        Ok(None) => return,
        // Unreadable now: still counted as visited, so it cannot hold the head of the list.
        Err(_) => {
            if let Err(e) = db.visited(&tenant, now, None, true).await {
                logged(e);
            }
            return;
        }
    };
    let mut views = views(env, &cfg).await;
    if cfg.settings.probes {
        let mut probed = false;
        for (provider, view) in &views {
            for b in &view.breakers {
                if b.view.state != BreakerStatus::HalfOpen {
                    continue;
                }
                let Some(model) = cfg.models.get(&b.view.model) else {
                    continue;
                };
                probed |= probe(env, dep, &cfg, provider, model).await;
            }
        }
        if probed {
            views = self::views(env, &cfg).await;
        }
    }
    let count = count(&cfg, &views);
    let before: DegradedMode = mode
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default();
    let (after, transition) = before.pass(count, &cfg.settings.degraded, now);
    if let Some(t) = transition {
        let body = Event::Alert(Alert::Degraded {
            tenant: tenant.as_str(),
            transition: t,
            healthy: count.healthy,
            total: count.total,
            time: now,
        });
        publish(env, tenant.as_str(), t.kind(), now, &body.to_line()).await;
    }
    let open = views.iter().any(|(_, v)| !v.breakers.is_empty());
    let changed = (after != before).then(|| match after {
        DegradedMode::Healthy => None,
        other => serde_json::to_string(&other).ok(),
    });
    let keep = open || after != DegradedMode::Healthy;
    if let Err(e) = db.visited(&tenant, now, changed, keep).await {
        logged(e);
    }
}

/// Each provider's breakers not closed and parked keys; a provider whose object cannot be
/// reached is left out of both the count and the probes this run.
async fn views<'c>(env: &Env, cfg: &'c TenantConfig) -> Vec<(&'c Provider, PassView)> {
    let reads = cfg.providers.values().map(|p| async move {
        let view: worker::Result<PassView> = call_object(
            env,
            &cfg.tenant,
            p.name.as_str(),
            Method::Get,
            "/pass_view",
            None,
        )
        .await;
        (p, view)
    });
    let mut out = Vec::new();
    for (p, view) in futures::future::join_all(reads).await {
        match view {
            Ok(v) => out.push((p, v)),
            Err(e) => fault(Fault::ProviderStateUnreadable {
                tenant: cfg.tenant.as_str(),
                provider: p.name.as_str(),
                error: &e,
            }),
        }
    }
    out
}

/// Providers with a catalog model, and those with a usable one.
fn count(cfg: &TenantConfig, views: &[(&Provider, PassView)]) -> ProviderCount {
    let mut count = ProviderCount {
        healthy: 0,
        total: 0,
    };
    for (p, view) in views {
        let models = || {
            cfg.models
                .values()
                .filter(|m| m.provider == p.name)
                .map(|m| m.id.as_str())
        };
        if models().next().is_none() {
            continue;
        }
        count.total += 1;
        let not_closed: Vec<&str> = view
            .breakers
            .iter()
            .map(|b| b.view.model.as_str())
            .collect();
        if provider_usable(models(), &not_closed, p.keys.len(), view.parked) {
            count.healthy += 1;
        }
    }
    count
}

/// Sends the breaker's probe if it is still due and no other probe is out; whether one was sent.
/// Each probe sent is an event (`breaker.probe`).
async fn probe(
    env: &Env,
    dep: &Deployment,
    cfg: &TenantConfig,
    provider: &Provider,
    model: &CatalogModel,
) -> bool {
    let body = serde_json::json!({
        "model": model.id, "max_tokens": 1,
        "messages": [{"role": "user", "content": "ping"}],
    });
    let inbound = match Inbound::parse(
        Surface::Chat,
        body.to_string().into_bytes(),
        dep.max_chat_json_values,
        None,
        None,
    ) {
        Ok(i) => i,
        Err(_) => return false,
    };
    let state = ProbeState {
        env,
        tenant: &cfg.tenant,
    };
    let cascade = Cascade {
        state: &state,
        upstream: &FetchUpstream::new(&inbound, 1),
        clock: &WorkerClock,
        limits: Limits {
            budget_ms: dep.defaults.request_budget_ms,
            breaker: cfg.settings.breaker,
            lease_ms: 0,
            max_park_ms: dep.max_park_ms,
            // The probe itself: never left to another probe.
            degraded: false,
        },
    };
    let outcome = cascade.run(&[Candidate { model, provider }]).await;
    let sent = outcome
        .attempts
        .first()
        .is_some_and(|a| !a.tries.is_empty());
    if !sent {
        return false;
    }
    let failed = match outcome.ending {
        Ending::Served { owed_report, .. } => {
            send_owed(&state, owed_report).await;
            None
        }
        _ => Some(
            outcome
                .attempts
                .last()
                .and_then(|a| a.failure)
                .map_or("refused", |f| f.as_str()),
        ),
    };
    let at = super::http::now_ms();
    let alert = Alert::Probe {
        tenant: cfg.tenant.as_str(),
        provider: provider.name.as_str(),
        model: model.id.as_str(),
        failed,
        time: at,
    };
    let body = Event::Alert(alert).to_line();
    publish(env, cfg.tenant.as_str(), "breaker.probe", at, &body).await;
    true
}
