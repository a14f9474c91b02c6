//! The runtime behind the request's ports (`request::ports`): one value per caller request,
//! holding its environment, `waitUntil`, deployment and counters. Everything here adapts; the
//! order and its decisions are `request`'s.

use super::cache_store::CacheApi;
use super::caller::Callers;
use super::deployment::Deployment;
use super::events::{ConsoleEvents, Debug, Event, EventSink};
use super::gateway::WorkerClock;
use super::http::now_ms;
use super::isolate::isolate;
use super::live_stats::{self, IsolateView};
use super::metrics::Metrics;
use super::metrics_sink::Extra;
use super::open_breakers::WithOpenBreakers;
use super::own_poll::own_poll;
use super::routing_client::RoutingClient;
use super::upstream::{FetchUpstream, StreamStart};
use super::{affinity_memory, ledger_client, request_metrics, trace_export, usage_sink};
use crate::cascade::CandidateAttempt;
use crate::config::otel::OtelExport;
use crate::config::TenantId;
use crate::governance::isolate::AdmissionRecord;
use crate::governance::AdmitRequest;
use crate::metrics::counts::RequestMetric;
use crate::request::admit::Governed;
use crate::request::lookup::CacheWrite;
use crate::request::ports::{CacheStore, LedgerPort, Meter, Ports, Sending, TraceSink};
use crate::response_cache::stored::StoredMeta;
use crate::routing::affinity::AffinityMemory;
use crate::surfaces::Inbound;
use crate::traces::span::Span;
use crate::usage::{TokenCounts, UsageRecord};
use worker::{Context, Env};

/// The runtime of one caller request.
pub(super) struct RequestPorts<'a> {
    pub env: &'a Env,
    pub ctx: &'a Context,
    pub dep: &'a Deployment,
    pub metrics: &'a Metrics,
    pub callers: Callers<'a>,
}

impl<'a> RequestPorts<'a> {
    pub fn new(env: &'a Env, ctx: &'a Context, dep: &'a Deployment, metrics: &'a Metrics) -> Self {
        Self {
            env,
            ctx,
            dep,
            metrics,
            callers: Callers(env, ctx, dep, metrics),
        }
    }
}

impl<'a> Ports for RequestPorts<'a> {
    type Stream = StreamStart;
    type Callers = Callers<'a>;
    type Ledger = Self;
    type Cache = Self;
    type Events = ConsoleEvents;
    type Meter = Self;
    type Traces = Self;
    type Clock = WorkerClock;
    type State<'s>
        = RoutingClient<'s>
    where
        Self: 's;
    type Upstream<'s>
        = FetchUpstream<'s>
    where
        Self: 's;
    type Observed<'s>
        = WithOpenBreakers<'s>
    where
        Self: 's;

    fn callers(&self) -> &Callers<'a> {
        &self.callers
    }
    fn ledger(&self) -> &Self {
        self
    }
    fn cache(&self) -> &Self {
        self
    }
    fn events(&self) -> &ConsoleEvents {
        &ConsoleEvents
    }
    fn meter(&self) -> &Self {
        self
    }
    fn clock(&self) -> &WorkerClock {
        &WorkerClock
    }
    fn traces(&self) -> &Self {
        self
    }

    fn state<'s>(&'s self, tenant: &'s TenantId) -> RoutingClient<'s> {
        RoutingClient {
            env: self.env,
            ctx: self.ctx,
            tenant,
            metrics: self.metrics,
        }
    }

    fn upstream<'s>(&'s self, inbound: &'s Inbound, s: Sending<'s>) -> FetchUpstream<'s> {
        FetchUpstream::new(inbound, s.prompt_estimate, s.trace)
            .guarding(s.guard, s.truncate_oldest)
            .watching_refusals(s.watch_refusals)
    }

    fn observed<'s>(&'s self, tenant: &'s TenantId, now_ms: u64) -> WithOpenBreakers<'s> {
        WithOpenBreakers(IsolateView { tenant, now_ms })
    }

    fn memory<R>(&self, f: impl FnOnce(&mut AffinityMemory) -> R) -> R {
        affinity_memory::with(f)
    }

    fn observe(
        &self,
        tenant: &TenantId,
        attempts: &[CandidateAttempt],
        streamed: bool,
        headers_ms: Option<u64>,
    ) {
        live_stats::record_attempts(tenant, attempts, streamed, headers_ms);
        live_stats::flush_due(self.env, self.ctx, tenant, self.dep.stats_flush_ms);
    }
}

impl LedgerPort for RequestPorts<'_> {
    async fn admit(&self, tenant: &TenantId, ask: AdmitRequest) -> AdmissionRecord {
        // Only a key or tenant with limits gets here: its code compiles on its first use.
        own_poll(ledger_client::admit(self.env, tenant, ask, self.metrics)).await
    }

    fn renew(&self, tenant: &TenantId, ask: AdmitRequest) {
        let (env, tenant) = (self.env.clone(), tenant.clone());
        self.ctx
            .wait_until(async move { ledger_client::renew(&env, &tenant, ask).await });
    }

    fn flush_kept(&self, tenant: &TenantId) {
        let (env, tenant) = (self.env.clone(), tenant.clone());
        self.ctx
            .wait_until(async move { ledger_client::flush_kept(&env, &tenant).await });
    }

    fn hand_off(&self, record: UsageRecord, governed: Governed) {
        usage_sink::hand_off(self.env, self.ctx, record, governed);
    }

    fn first_report(&self, tenant: &str, scope: &str, now: u64, retry_after: Option<u64>) -> bool {
        isolate(|i| {
            i.budget_reported
                .borrow_mut()
                .first(tenant, scope, now, retry_after)
        })
    }

    fn alert(&self, tenant: &TenantId, kind: &'static str, at: u64, body: String) {
        let (env, tenant) = (self.env.clone(), tenant.to_string());
        self.ctx.wait_until(async move {
            super::alerts::publish(&env, &tenant, kind, at, &body).await;
        });
    }
}

impl CacheStore for RequestPorts<'_> {
    async fn get(&self, key: &str) -> Option<(StoredMeta, Vec<u8>)> {
        // This isolate's copy answers without a read of the store.
        let now = now_ms();
        if let Some((meta, body)) = isolate(|i| i.recent_entries.borrow_mut().get(key, now)) {
            return Some((meta, body.to_vec()));
        }
        // A tenant without the cache never polls (so never compiles) the store's read.
        own_poll(async move {
            let (meta, body) = CacheApi::of(self.env).get(key).await?;
            keep_copy(key, &meta, &body);
            Some((meta, body))
        })
        .await
    }

    fn put(&self, write: CacheWrite, meta: StoredMeta, body: Vec<u8>) {
        let env = self.env.clone();
        self.ctx
            .wait_until(async move { put(&env, write, meta, body).await });
    }
}

/// Keeps this isolate's copy of an entry (`response_cache::recent`).
fn keep_copy(key: &str, meta: &StoredMeta, body: &[u8]) {
    let copy = (meta.clone(), body.into());
    isolate(|i| i.recent_entries.borrow_mut().put(key, copy.0, copy.1));
}

/// Writes a cache entry (and this isolate's copy), and announces it when asked
/// (`DEBUG_COUNTERS`).
pub(super) async fn put(env: &Env, write: CacheWrite, meta: StoredMeta, body: Vec<u8>) {
    keep_copy(&write.key, &meta, &body);
    CacheApi::of(env)
        .put(&write.key, &meta, body, write.ttl_s)
        .await;
    if let Some(request_id) = write.announce {
        let stored = Debug::CacheStored {
            request_id: &request_id,
        };
        ConsoleEvents.emit(&Event::Debug(stored));
    }
}

impl TraceSink for RequestPorts<'_> {
    fn export(&self, tenant: &TenantId, export: &OtelExport, spans: Vec<Span>) {
        if let Some(delivery) = trace_export::add(self.env, tenant, export, spans) {
            self.ctx.wait_until(delivery);
        }
    }
}

impl Meter for RequestPorts<'_> {
    fn count(
        &self,
        tenant: &TenantId,
        metric: &RequestMetric,
        provider: &str,
        tokens: Option<TokenCounts>,
    ) {
        let extra = Extra { provider, tokens };
        request_metrics::record(self.env, self.ctx, tenant, metric, extra);
    }

    fn calls(&self) -> (u32, u32) {
        (
            self.metrics.d1_queries(),
            self.metrics.durable_object_calls(),
        )
    }
}
