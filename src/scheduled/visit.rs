//! One tenant's visit by the scheduled pass: each breaker past its open duration gets its single
//! half-open probe (`probe`), then the tenant's degraded mode is decided from its providers'
//! state and stored with its watch.

use super::ports::{Alerts, Loaded, PassStore, Ports, ProviderStates, Visited};
use super::probe::{probe, ProbeLimits};
use crate::config::settings::DegradedSettings;
use crate::config::{Provider, TenantConfig, TenantId};
use crate::events::{Alert, Event, EventSink, Fault};
use crate::health::degraded::{provider_usable, DegradedMode, DegradedTransition, ProviderCount};
use crate::health::provider_state::BreakerStatus;
use crate::health::PassView;

pub async fn visit<P: Ports>(
    ports: &P,
    limits: ProbeLimits,
    tenant: TenantId,
    mode: Option<&str>,
    now: u64,
) {
    let store = ports.store();
    let cfg = match store.config(&tenant).await {
        Loaded::Config(cfg) => cfg,
        // Deleted: retention drops its watch.
        Loaded::Deleted => return,
        // Unreadable now: still counted as visited, so it cannot hold the head of the list.
        Loaded::Unreadable => {
            let visit = Visited {
                at: now,
                mode: None,
                keep: true,
            };
            store.visited(&tenant, visit).await;
            return;
        }
    };
    let mut views = views(ports, &cfg).await;
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
                probed |= probe(ports, limits, &cfg, provider, model).await;
            }
        }
        if probed {
            views = self::views(ports, &cfg).await;
        }
    }
    let count = count(&cfg, &views);
    let open = views.iter().any(|(_, v)| !v.breakers.is_empty());
    let (visit, transition) = decide(mode, count, &cfg.settings.degraded, open, now);
    if let Some(t) = transition {
        let body = Event::Alert(Alert::Degraded {
            tenant: tenant.as_str(),
            transition: t,
            healthy: count.healthy,
            total: count.total,
            time: now,
        });
        let alerts = ports.alerts();
        alerts
            .publish(tenant.as_str(), t.kind(), now, &body.to_line())
            .await;
    }
    store.visited(&tenant, visit).await;
}

/// The visit's record and the degraded transition it makes, from the stored mode (`before`, a
/// state that does not read is healthy), what the pass counted and whether any breaker is not
/// closed. The tenant stays watched while a breaker is not closed or it is not healthy; the mode
/// is written only when it changed.
pub fn decide(
    before: Option<&str>,
    count: ProviderCount,
    settings: &DegradedSettings,
    open: bool,
    now: u64,
) -> (Visited, Option<DegradedTransition>) {
    let before: DegradedMode = before
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default();
    let (after, transition) = before.pass(count, settings, now);
    let mode = (after != before).then(|| match after {
        DegradedMode::Healthy => None,
        other => serde_json::to_string(&other).ok(),
    });
    let keep = open || after != DegradedMode::Healthy;
    (
        Visited {
            at: now,
            mode,
            keep,
        },
        transition,
    )
}

/// Each provider's breakers not closed and parked keys; a provider whose object cannot be
/// reached is left out of both the count and the probes this run.
async fn views<'c, P: Ports>(ports: &P, cfg: &'c TenantConfig) -> Vec<(&'c Provider, PassView)> {
    let routing = ports.routing();
    let reads = cfg.providers.values().map(|p| async move {
        let view = routing.pass_view(&cfg.tenant, &p.name).await;
        (p, view)
    });
    let mut out = Vec::new();
    for (p, view) in futures::future::join_all(reads).await {
        match view {
            Ok(v) => out.push((p, v)),
            Err(e) => ports
                .events()
                .emit(&Event::Fault(Fault::ProviderStateUnreadable {
                    tenant: cfg.tenant.as_str(),
                    provider: p.name.as_str(),
                    error: &e,
                })),
        }
    }
    out
}

/// Providers with a catalog model, and those with a usable one.
pub fn count(cfg: &TenantConfig, views: &[(&Provider, PassView)]) -> ProviderCount {
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
