//! The scheduled pass, plain Rust over ports: retention, then a visit of the tenants on the
//! watch list (a breaker opened, or degraded mode not yet over), `PAGE` a run, the longest
//! unvisited first, `CONCURRENCY` at a time, then one `ScheduledPass` event. A tenant's visit
//! (`visit`) probes its due breakers and decides its degraded mode. The pass's clock is the
//! cron event's `scheduledTime`, passed in as `now`.

pub mod ports;
pub mod probe;
pub mod visit;

pub use crate::health::PassView;
pub use ports::{Alerts, Loaded, PassStore, Ports, ProviderStates, Visited, Watched};
pub use probe::ProbeLimits;

use crate::config::TenantId;
use crate::events::{Event, EventSink, Fault};
use crate::usage::retention::Retention;

/// Tenants visited per run at most: each visit is one config read, one call per provider and a
/// probe per due breaker, so a page stays far inside a scheduled invocation's limits. A longer
/// watch list is covered over the next runs (oldest visit first).
pub const PAGE: u32 = 50;
/// Visits run this many at a time.
pub const CONCURRENCY: usize = 8;

/// One run at `now`. Retention comes first and never stops the run (a malformed retention var is
/// a fault); a watch list that cannot be read ends it untold. Every watched tenant read counts in
/// the event, visited or not (an id that does not parse is skipped).
pub async fn run<P: Ports>(
    ports: &P,
    retention: Result<Retention, String>,
    limits: ProbeLimits,
    now: u64,
) {
    match retention {
        Ok(r) => ports.store().delete_expired(r.cutoffs(now)).await,
        Err(e) => ports
            .events()
            .emit(&Event::Fault(Fault::InvalidRetentionVars { error: &e })),
    }
    let Some(watched) = ports.store().watched(PAGE).await else {
        return;
    };
    let visits = watched.len();
    for group in watched.chunks(CONCURRENCY) {
        let passes = group.iter().filter_map(|w| {
            let t = TenantId::parse(&w.tenant_id).ok()?;
            Some(visit::visit(
                ports,
                limits,
                t,
                w.health_mode.as_deref(),
                now,
            ))
        });
        futures::future::join_all(passes).await;
    }
    ports.events().emit(&Event::ScheduledPass {
        time: now,
        tenants: visits,
    });
}
