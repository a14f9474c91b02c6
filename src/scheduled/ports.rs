//! The ports the scheduled pass runs over. The edge implements each once (D1, the routing
//! objects, the alert outbox, the console, fetch); host tests implement them with fakes. Static
//! dispatch throughout: the pass is generic over one `Ports` bundle.

use crate::cascade::{Clock, Upstream};
use crate::config::{ProviderName, TenantConfig, TenantId};
use crate::events::EventSink;
use crate::health::{AcquireRequest, Lease, PassView, ReportRequest};
use crate::surfaces::Inbound;
use crate::usage::retention::Cutoffs;
use serde::Deserialize;
use std::fmt::Display;

/// A watched tenant and its stored degraded-mode state (JSON, or none while healthy).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Watched {
    pub tenant_id: String,
    pub health_mode: Option<String>,
}

/// A tenant's config as the pass reads it.
pub enum Loaded {
    Config(Box<TenantConfig>),
    /// The tenant is gone: retention drops its watch.
    Deleted,
    /// The read failed (the store logged why).
    Unreadable,
}

/// What a visit stores: when it happened, the degraded mode if it changed (`Some(None)`: back
/// to healthy, stored as no state), and whether the tenant stays on the watch list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visited {
    pub at: u64,
    pub mode: Option<Option<String>>,
    pub keep: bool,
}

/// The pass's reads and writes (D1). A failed write is the store's to log: the pass goes on.
#[allow(async_fn_in_trait)]
pub trait PassStore {
    /// Retention: events and roll-ups past their cutoffs, and watches of deleted tenants.
    async fn delete_expired(&self, cutoffs: Cutoffs);
    /// At most `limit` watched tenants, the longest unvisited first; `None` when unreadable.
    async fn watched(&self, limit: u32) -> Option<Vec<Watched>>;
    async fn config(&self, tenant: &TenantId) -> Loaded;
    /// After a visit: its time, the mode if it changed, and whether the watch stays.
    async fn visited(&self, tenant: &TenantId, visit: Visited);
}

/// The tenant's routing objects, one per provider.
#[allow(async_fn_in_trait)]
pub trait ProviderStates {
    type Error: Display;
    async fn pass_view(
        &self,
        tenant: &TenantId,
        provider: &ProviderName,
    ) -> Result<PassView, Self::Error>;
    /// The breaker's one probe slot or a skip (`/probe`, never a plain admission); `None` when
    /// the object cannot be reached.
    async fn acquire_probe(
        &self,
        tenant: &TenantId,
        provider: &ProviderName,
        req: AcquireRequest,
    ) -> Option<Lease>;
    /// A probe's report, sent as a user request's; the transitions it causes are events like
    /// theirs.
    async fn report(&self, tenant: &TenantId, provider: &ProviderName, req: ReportRequest);
}

/// Where an alert goes: stored as an event and, when the tenant wants it, to its outbox.
#[allow(async_fn_in_trait)]
pub trait Alerts {
    async fn publish(&self, tenant: &str, kind: &str, at: u64, body: &str);
}

/// Every port of the scheduled pass.
pub trait Ports {
    type Store: PassStore;
    type Routing: ProviderStates;
    type Alerts: Alerts;
    type Events: EventSink;
    type Clock: Clock;
    type Upstream<'a>: Upstream
    where
        Self: 'a;

    fn store(&self) -> &Self::Store;
    fn routing(&self) -> &Self::Routing;
    fn alerts(&self) -> &Self::Alerts;
    fn events(&self) -> &Self::Events;
    fn clock(&self) -> &Self::Clock;
    /// The upstream a probe is sent through, the one user traffic takes.
    fn upstream<'a>(&'a self, probe: &'a Inbound, prompt_estimate: u64) -> Self::Upstream<'a>;
}
