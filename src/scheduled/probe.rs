//! A due breaker's single half-open probe: a minimal chat request (`max_tokens: 1`) through the
//! cascade, the upstream port and the classification user traffic takes. Its acquire takes the
//! breaker's one probe slot or skips; a routing object that cannot be reached means no probe,
//! because a scheduled probe never fails open.

use super::ports::{Alerts, Ports, ProviderStates};
use crate::cascade::{send_owed, Cascade, Clock, Ending, Limits, RoutingState};
use crate::config::{CatalogModel, Provider, ProviderName, TenantConfig, TenantId};
use crate::events::{Alert, Event};
use crate::health::probe_record::ScheduledProbe;
use crate::health::{AcquireRequest, Gate, Lease, ReportRequest};
use crate::routing::Candidate;
use crate::surfaces::{Inbound, Surface};

/// What the deployment sets for a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeLimits {
    /// `MAX_CHAT_JSON_VALUES`, as for a caller's body.
    pub max_chat_json_values: usize,
    /// The request budget of the deployment's defaults.
    pub budget_ms: u64,
    /// `MAX_PARK_MS`.
    pub max_park_ms: u64,
}

/// The routing port of a scheduled probe: `/probe` for the acquire, failing closed; its report
/// carries when the probe was sent and how long it took, for the provider's probe record.
pub struct ProbeState<'a, R, C> {
    pub routing: &'a R,
    pub tenant: &'a TenantId,
    pub clock: &'a C,
    pub sent_at: u64,
}

impl<R: ProviderStates, C: Clock> RoutingState for ProbeState<'_, R, C> {
    async fn acquire(&self, provider: &ProviderName, req: AcquireRequest) -> Lease {
        let lease = self.routing.acquire_probe(self.tenant, provider, req).await;
        // Unreachable: no probe.
        lease.unwrap_or(Lease {
            admission: Gate::Skip { until: None },
            keys: Vec::new(),
            grant: None,
        })
    }

    async fn report(&self, provider: &ProviderName, mut req: ReportRequest) {
        let ms = self.clock.now_ms().saturating_sub(self.sent_at);
        req.scheduled = Some(ScheduledProbe {
            at: self.sent_at,
            ms,
        });
        self.routing.report(self.tenant, provider, req).await;
    }
}

/// Sends the breaker's probe if it is still due and no other probe is out; whether one was sent.
/// Each probe sent is an alert (`breaker.probe`), timed when it came back.
pub async fn probe<P: Ports>(
    ports: &P,
    limits: ProbeLimits,
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
        limits.max_chat_json_values,
        None,
        None,
    ) {
        Ok(i) => i,
        Err(_) => return false,
    };
    let state = ProbeState {
        routing: ports.routing(),
        tenant: &cfg.tenant,
        clock: ports.clock(),
        sent_at: ports.clock().now_ms(),
    };
    let cascade = Cascade {
        state: &state,
        // The probe's prompt is one word: its estimate is one token.
        upstream: &ports.upstream(&inbound, 1),
        clock: ports.clock(),
        limits: Limits {
            budget_ms: limits.budget_ms,
            breaker: cfg.settings.breaker,
            lease_ms: 0,
            max_park_ms: limits.max_park_ms,
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
    let at = ports.clock().now_ms();
    let alert = Alert::Probe {
        tenant: cfg.tenant.as_str(),
        provider: provider.name.as_str(),
        model: model.id.as_str(),
        failed,
        time: at,
    };
    let body = Event::Alert(alert).to_line();
    let alerts = ports.alerts();
    alerts
        .publish(cfg.tenant.as_str(), "breaker.probe", at, &body)
        .await;
    true
}
