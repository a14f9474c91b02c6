//! The cron trigger: retention, then a visit of the tenants on the watch
//! list (a breaker opened, or degraded mode not yet over), `PAGE` a run, the longest unvisited
//! first, `CONCURRENCY` at a time. A tenant's visit (`tenant_pass`) probes its due breakers and
//! decides its degraded mode. The pass's clock is the event's `scheduledTime`.

use super::d1::{logged, Db};
use super::deployment::deployment;
use super::events::{fault, ConsoleEvents, Event, EventSink, Fault};
use super::tenant_pass::visit;
use crate::config::TenantId;
use crate::usage::retention::Retention;
use worker::{event, Env, ScheduleContext, ScheduledEvent};

/// Tenants visited per run at most: each visit is one config read, one call per provider and a
/// probe per due breaker, so a page stays far inside a scheduled invocation's limits. A longer
/// watch list is covered over the next runs (oldest visit first).
pub const PAGE: u32 = 50;
/// Visits run this many at a time.
const CONCURRENCY: usize = 8;

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
    match Retention::from_vars(|n| env.var(n).ok().map(|v| v.to_string())) {
        Ok(r) => {
            if let Err(e) = db.delete_expired(r.cutoffs(now)).await {
                logged(e);
            }
        }
        Err(e) => fault(Fault::InvalidRetentionVars { error: &e }),
    }
    let watched = match db.watched(PAGE).await {
        Ok(w) => w,
        Err(e) => {
            logged(e);
            return;
        }
    };
    let visits = watched.len();
    for group in watched.chunks(CONCURRENCY) {
        let passes = group.iter().filter_map(|w| {
            let t = TenantId::parse(&w.tenant_id).ok()?;
            Some(visit(env, &dep, &db, t, w.health_mode.as_deref(), now))
        });
        futures::future::join_all(passes).await;
    }
    ConsoleEvents.emit(&Event::ScheduledPass {
        time: now,
        tenants: visits,
    });
}
