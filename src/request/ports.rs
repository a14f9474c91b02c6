//! The ports the request's order runs over. Each is a trait the edge implements once with the
//! runtime (fetch, D1, Durable Objects, the Cache API, the console) and host tests implement with
//! fakes. Static dispatch throughout: the order is generic over one `Ports` bundle, so the hot
//! path has no `dyn` and no boxed future.

use super::admit::Governed;
use super::lookup::CacheWrite;
use crate::cascade::{CandidateAttempt, Clock, RoutingState, StreamHead, Upstream, UpstreamBody};
use crate::config::otel::OtelExport;
use crate::config::TenantId;
use crate::events::EventSink;
use crate::governance::isolate::AdmissionRecord;
use crate::governance::AdmitRequest;
use crate::metrics::counts::RequestMetric;
use crate::response_cache::stored::StoredMeta;
use crate::routing::affinity::AffinityMemory;
use crate::routing::Observed;
use crate::surfaces::Inbound;
use crate::traces::span::Span;
use crate::traces::TraceContext;
use crate::usage::{TokenCounts, UsageRecord};

pub use super::identify::CallerStore;
pub use super::incoming::Incoming;

/// The tenant's ledger: admission, the usage record, and the budget alert.
#[allow(async_fn_in_trait)]
pub trait LedgerPort {
    async fn admit(&self, tenant: &TenantId, ask: AdmitRequest) -> AdmissionRecord;
    /// Renews this isolate's slice, in the background.
    fn renew(&self, tenant: &TenantId, ask: AdmitRequest);
    /// Sends the records kept from a failed call, in the background.
    fn flush_kept(&self, tenant: &TenantId);
    /// Hands a finished request's record over: logged, then settled, in the background.
    fn hand_off(&self, record: UsageRecord, governed: Governed);
    /// Whether this spent-budget refusal is the first of its scope's window in this isolate.
    fn first_report(&self, tenant: &str, scope: &str, now: u64, retry_after: Option<u64>) -> bool;
    /// Stores and delivers an alert, in the background.
    fn alert(&self, tenant: &TenantId, kind: &'static str, at: u64, body: String);
}

/// The response cache's store.
#[allow(async_fn_in_trait)]
pub trait CacheStore {
    async fn get(&self, key: &str) -> Option<(StoredMeta, Vec<u8>)>;
    /// Stores an entry after the answer is sent (in the background).
    fn put(&self, write: CacheWrite, meta: StoredMeta, body: Vec<u8>);
}

/// The request counters the metrics endpoint and the debug headers read.
pub trait Meter {
    /// Adds a finished request to the tenant's metrics (tokens when known).
    fn count(
        &self,
        tenant: &TenantId,
        metric: &RequestMetric,
        provider: &str,
        tokens: Option<TokenCounts>,
    );
    /// D1 queries and Durable Object calls this request made so far.
    fn calls(&self) -> (u32, u32);
}

/// Where a traced request's spans go: the isolate's batch for the tenant's receiver, sent after
/// the answer, never on the request's path.
pub trait TraceSink {
    fn export(&self, tenant: &TenantId, export: &OtelExport, spans: Vec<Span>);
}

/// How the upstream port sends this request.
#[derive(Debug, Clone, Copy)]
pub struct Sending<'a> {
    pub prompt_estimate: u64,
    /// The tenant's `context_window_guard`.
    pub guard: bool,
    /// `X-CogniGate-Truncate: oldest`.
    pub truncate_oldest: bool,
    /// Answers are read for a safety refusal.
    pub watch_refusals: bool,
    /// The request's trace: each call carries its span's `traceparent` (`None`: `otel` is off).
    pub trace: Option<&'a TraceContext>,
}

/// Every port of a caller request.
pub trait Ports {
    /// The upstream's stream past its first event, relayed by the runtime.
    type Stream: StreamHead;
    type Callers: CallerStore;
    type Ledger: LedgerPort;
    type Cache: CacheStore;
    type Events: EventSink;
    type Meter: Meter;
    type Traces: TraceSink;
    type Clock: Clock;
    type State<'a>: RoutingState
    where
        Self: 'a;
    type Upstream<'a>: Upstream<Body = UpstreamBody<Self::Stream>>
    where
        Self: 'a;
    type Observed<'a>: Observed
    where
        Self: 'a;

    fn callers(&self) -> &Self::Callers;
    fn ledger(&self) -> &Self::Ledger;
    fn cache(&self) -> &Self::Cache;
    fn events(&self) -> &Self::Events;
    fn meter(&self) -> &Self::Meter;
    fn traces(&self) -> &Self::Traces;
    fn clock(&self) -> &Self::Clock;
    /// The tenant's routing state (breakers, keys, parks).
    fn state<'a>(&'a self, tenant: &'a TenantId) -> Self::State<'a>;
    fn upstream<'a>(&'a self, inbound: &'a Inbound, sending: Sending<'a>) -> Self::Upstream<'a>;
    /// What this isolate has observed of the tenant's models (live stats, breakers known open).
    fn observed<'a>(&'a self, tenant: &'a TenantId, now_ms: u64) -> Self::Observed<'a>;
    /// The isolate's affinity memory.
    fn memory<R>(&self, f: impl FnOnce(&mut AffinityMemory) -> R) -> R;
    /// Adds the request's attempts to the live stats (`headers_ms`: the served answer's).
    fn observe(
        &self,
        tenant: &TenantId,
        attempts: &[CandidateAttempt],
        streamed: bool,
        headers_ms: Option<u64>,
    );
}
