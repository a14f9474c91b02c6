//! The cron trigger, and the scheduled pass's ports over the runtime: D1 for retention, the watch
//! list and configs, the alert outbox, the console, fetch. The pass itself, its order and every
//! decision, is `crate::scheduled`; its clock is the event's `scheduledTime`.

use super::alerts::publish;
use super::d1::{logged, Db};
use super::deployment::deployment;
use super::events::ConsoleEvents;
use super::gateway::WorkerClock;
use super::tenant_pass::RoutingObjects;
use super::upstream::FetchUpstream;
use crate::config::{Defaults, TenantId};
use crate::scheduled::{self, Alerts, Loaded, PassStore, Ports, ProbeLimits, Visited, Watched};
use crate::surfaces::Inbound;
use crate::usage::retention::{Cutoffs, Retention};
use worker::{event, Env, ScheduleContext, ScheduledEvent};

#[event(scheduled)]
async fn scheduled(event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    let now = event.schedule().max(0.0) as u64;
    run(&env, now).await;
}

async fn run(env: &Env, now: u64) {
    let Ok(dep) = deployment(env) else { return };
    let db = match Db::open(env) {
        Ok(db) => db,
        Err(e) => {
            logged(e);
            return;
        }
    };
    let retention = Retention::from_vars(|n| env.var(n).ok().map(|v| v.to_string()));
    let limits = ProbeLimits {
        max_chat_json_values: dep.max_chat_json_values,
        budget_ms: dep.defaults.request_budget_ms,
        max_park_ms: dep.max_park_ms,
    };
    let ports = PassPorts {
        env,
        defaults: &dep.defaults,
        db: &db,
        routing: RoutingObjects { env },
    };
    scheduled::run(&ports, retention, limits, now).await;
}

/// The pass's ports; a failed D1 write is logged and the pass goes on.
struct PassPorts<'a> {
    env: &'a Env,
    defaults: &'a Defaults,
    db: &'a Db,
    routing: RoutingObjects<'a>,
}

impl PassStore for PassPorts<'_> {
    async fn delete_expired(&self, cutoffs: Cutoffs) {
        if let Err(e) = self.db.delete_expired(cutoffs).await {
            logged(e);
        }
    }

    async fn watched(&self, limit: u32) -> Option<Vec<Watched>> {
        self.db.watched(limit).await.map_err(logged).ok()
    }

    async fn config(&self, tenant: &TenantId) -> Loaded {
        match super::store::load_config(self.env, tenant, self.defaults).await {
            Ok(Some(cfg)) => Loaded::Config(Box::new(cfg)),
            Ok(None) => Loaded::Deleted,
            Err(_) => Loaded::Unreadable,
        }
    }

    async fn visited(&self, tenant: &TenantId, visit: Visited) {
        if let Err(e) = self.db.visited(tenant, visit).await {
            logged(e);
        }
    }
}

impl Alerts for PassPorts<'_> {
    async fn publish(&self, tenant: &str, kind: &str, at: u64, body: &str) {
        publish(self.env, tenant, kind, at, body).await;
    }
}

impl<'p> Ports for PassPorts<'p> {
    type Store = Self;
    type Routing = RoutingObjects<'p>;
    type Alerts = Self;
    type Events = ConsoleEvents;
    type Clock = WorkerClock;
    type Upstream<'a>
        = FetchUpstream<'a>
    where
        Self: 'a;

    fn store(&self) -> &Self {
        self
    }
    fn routing(&self) -> &RoutingObjects<'p> {
        &self.routing
    }
    fn alerts(&self) -> &Self {
        self
    }
    fn events(&self) -> &ConsoleEvents {
        &ConsoleEvents
    }
    fn clock(&self) -> &WorkerClock {
        &WorkerClock
    }
    fn upstream<'a>(&'a self, probe: &'a Inbound, prompt_estimate: u64) -> FetchUpstream<'a> {
        FetchUpstream::new(probe, prompt_estimate, None)
    }
}
