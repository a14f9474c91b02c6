//! Fakes of every port of a caller request: one tenant, one minted key, an in-memory ledger,
//! cache and routing state, a scripted upstream, and what was emitted and counted.

use crate::support::fakes::{tenant, FakeClock};
use cognigate::api::ApiError;
use cognigate::callers::auth::{hash_key, mint_caller_key};
use cognigate::cascade::{Call, RoutingState, StreamHead, Upstream, UpstreamBody, UpstreamReply};
use cognigate::config::caller_key::CallerKeyMac;
use cognigate::config::otel::OtelExport;
use cognigate::config::policy::KeyPolicy;
use cognigate::config::{CallerKey, ProviderName, TenantConfig, TenantId};
use cognigate::events::{Event, EventSink};
use cognigate::governance::isolate::{AdmissionRecord, Via};
use cognigate::governance::refusals::Denial;
use cognigate::governance::{budget_alert::Reported, Admission, AdmitRequest};
use cognigate::health::{AcquireRequest, Lease, ProviderState, ReportRequest};
use cognigate::metrics::counts::RequestMetric;
use cognigate::request::admit::Governed;
use cognigate::request::lookup::CacheWrite;
use cognigate::request::ports::{CacheStore, LedgerPort, Meter, Ports, Sending, TraceSink};
use cognigate::request::{CallerStore, Incoming};
use cognigate::response_cache::stored::StoredMeta;
use cognigate::routing::affinity::AffinityMemory;
use cognigate::routing::NothingObserved;
use cognigate::surfaces::Inbound;
use cognigate::traces::span::Span;
use cognigate::traces::TraceContext;
use cognigate::usage::{TokenCounts, UsageRecord};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// A stream past its first event: the runtime relays it, so the host only sees it handed over.
pub struct Relayed;

impl StreamHead for Relayed {
    fn headers_ms(&self) -> u64 {
        4
    }
}

/// What the upstream answers a model.
#[derive(Clone, Copy)]
pub enum Says {
    Ok,
    Unavailable,
    Stream,
}

pub struct World {
    pub clock: FakeClock,
    mac: CallerKeyMac,
    pub token: String,
    key: CallerKey,
    cfg: Rc<TenantConfig>,
    pub d1_reads: Cell<usize>,
    /// What the ledger answers; `None`: admit.
    pub refuse: Cell<Option<(Denial, Option<u64>)>>,
    pub admits: Cell<usize>,
    pub records: RefCell<Vec<(UsageRecord, Governed)>>,
    reported: RefCell<Reported>,
    pub alerts: RefCell<Vec<String>>,
    pub stored: RefCell<BTreeMap<String, (StoredMeta, Vec<u8>)>>,
    pub lookups: Cell<usize>,
    pub events: RefCell<Vec<String>>,
    pub counted: RefCell<Vec<RequestMetric>>,
    providers: RefCell<BTreeMap<String, ProviderState>>,
    pub reports: Cell<usize>,
    says: RefCell<BTreeMap<String, VecDeque<Says>>>,
    pub sent: RefCell<Vec<String>>,
    pub observed: Cell<usize>,
    /// The spans exported, and each upstream call's `traceparent` (`None`: none was sent).
    pub spans: RefCell<Vec<Span>>,
    pub traceparents: RefCell<Vec<Option<String>>>,
}

impl World {
    /// Tenant `acme` (models `m1`..`m3` on `p1`..`p3`, rule `chain`), a key under `policy`.
    pub fn new(policy: KeyPolicy) -> Self {
        Self::with(policy, tenant(1, "failover"))
    }

    pub fn with(policy: KeyPolicy, cfg: TenantConfig) -> Self {
        let mac = CallerKeyMac::derive(&[9; 32]);
        let (id, token) = mint_caller_key(&[7; 32], Some(&mac));
        let key = CallerKey {
            tenant: TenantId::parse("acme").unwrap(),
            id,
            policy: Rc::new(policy),
            generation: 1,
        };
        Self {
            clock: FakeClock(Cell::new(1_000_000)),
            mac,
            token,
            key,
            cfg: Rc::new(cfg),
            d1_reads: Cell::new(0),
            refuse: Cell::new(None),
            admits: Cell::new(0),
            records: RefCell::default(),
            reported: RefCell::default(),
            alerts: RefCell::default(),
            stored: RefCell::default(),
            lookups: Cell::new(0),
            events: RefCell::default(),
            counted: RefCell::default(),
            providers: RefCell::default(),
            reports: Cell::new(0),
            says: RefCell::default(),
            sent: RefCell::default(),
            observed: Cell::new(0),
            spans: RefCell::default(),
            traceparents: RefCell::default(),
        }
    }

    pub fn says(&self, model: &str, answers: &[Says]) {
        let mut says = self.says.borrow_mut();
        says.entry(model.to_owned())
            .or_default()
            .extend(answers.iter().copied());
    }

    /// The request events emitted, as their lines.
    pub fn request_events(&self) -> Vec<String> {
        let events = self.events.borrow();
        let lines = events.iter().filter(|l| l.contains(r#""msg":"request""#));
        lines.cloned().collect()
    }

    /// The one request event; fails unless exactly one was emitted.
    pub fn the_event(&self) -> String {
        let events = self.request_events();
        assert_eq!(events.len(), 1, "one request event: {events:?}");
        events[0].clone()
    }
}

impl CallerStore for World {
    fn mac(&self) -> Option<CallerKeyMac> {
        Some(self.mac.clone())
    }

    async fn key(&self, hash: &str) -> Result<Option<CallerKey>, ApiError> {
        self.d1_reads.set(self.d1_reads.get() + 1);
        Ok((hash == hash_key(&self.token)).then(|| self.key.clone()))
    }

    async fn config(&self, _: &TenantId) -> Result<Option<Rc<TenantConfig>>, ApiError> {
        self.d1_reads.set(self.d1_reads.get() + 1);
        Ok(Some(self.cfg.clone()))
    }
}

impl LedgerPort for World {
    async fn admit(&self, _: &TenantId, _: AdmitRequest) -> AdmissionRecord {
        self.admits.set(self.admits.get() + 1);
        let verdict = match self.refuse.get() {
            None => Admission::Admit,
            Some((refusal, retry_after_secs)) => Admission::Deny {
                denial: refusal,
                retry_after_secs,
            },
        };
        AdmissionRecord {
            verdict,
            hold: None,
            via: Via::Ledger,
            flush: false,
        }
    }

    fn renew(&self, _: &TenantId, _: AdmitRequest) {}

    fn flush_kept(&self, _: &TenantId) {}

    fn hand_off(&self, record: UsageRecord, governed: Governed) {
        self.records.borrow_mut().push((record, governed));
    }

    fn first_report(&self, tenant: &str, scope: &str, now: u64, retry: Option<u64>) -> bool {
        self.reported.borrow_mut().first(tenant, scope, now, retry)
    }

    fn alert(&self, _: &TenantId, kind: &'static str, _: u64, body: String) {
        self.alerts.borrow_mut().push(format!("{kind} {body}"));
    }
}

impl CacheStore for World {
    async fn get(&self, key: &str) -> Option<(StoredMeta, Vec<u8>)> {
        self.lookups.set(self.lookups.get() + 1);
        self.stored.borrow().get(key).cloned()
    }

    fn put(&self, write: CacheWrite, meta: StoredMeta, body: Vec<u8>) {
        self.stored.borrow_mut().insert(write.key, (meta, body));
    }
}

impl EventSink for World {
    fn emit(&self, event: &Event<'_>) {
        self.events.borrow_mut().push(event.to_line());
    }
}

impl Meter for World {
    fn count(&self, _: &TenantId, metric: &RequestMetric, _: &str, _: Option<TokenCounts>) {
        self.counted.borrow_mut().push(metric.clone());
    }

    fn calls(&self) -> (u32, u32) {
        (u32::try_from(self.d1_reads.get()).unwrap(), 0)
    }
}

impl RoutingState for &World {
    async fn acquire(&self, provider: &ProviderName, req: AcquireRequest) -> Lease {
        let mut map = self.providers.borrow_mut();
        let state = map.entry(provider.to_string()).or_default();
        state.acquire(&req, self.clock.0.get())
    }

    async fn report(&self, provider: &ProviderName, req: ReportRequest) {
        self.reports.set(self.reports.get() + 1);
        let mut map = self.providers.borrow_mut();
        let state = map.entry(provider.to_string()).or_default();
        state.report(&req, self.clock.0.get());
    }
}

/// The scripted upstream, as the order's port.
/// The upstream of one request: its trace, and how many calls it made (each call's number is
/// its `traceparent`'s span, as the edge's port numbers them).
pub struct Sent<'a>(&'a World, Option<&'a TraceContext>, Cell<u32>);

impl Upstream for Sent<'_> {
    type Body = UpstreamBody<Relayed>;

    async fn send(&self, call: Call<'_>) -> UpstreamReply<UpstreamBody<Relayed>> {
        let model = call.model.upstream_model.clone();
        let n = self.2.get();
        self.2.set(n + 1);
        let traceparent = self.1.map(|t| t.upstream_traceparent(n));
        self.0.traceparents.borrow_mut().push(traceparent);
        self.0.sent.borrow_mut().push(model.clone());
        self.0.clock.advance(10);
        let says = self
            .0
            .says
            .borrow_mut()
            .get_mut(&model)
            .and_then(VecDeque::pop_front);
        match says.unwrap_or(Says::Ok) {
            Says::Ok => UpstreamReply::Success {
                status: 200,
                body: UpstreamBody::Full {
                    content_type: "application/json".to_owned(),
                    bytes: format!(r#"{{"model":"{model}","choices":[]}}"#).into_bytes(),
                    usage: Some(TokenCounts::new(12, 5, 0)),
                    headers_ms: 3,
                    refusal: false,
                },
            },
            Says::Unavailable => UpstreamReply::Status {
                status: 503,
                retry_after: None,
                headers: Vec::new(),
                text: "overloaded".to_owned(),
            },
            Says::Stream => UpstreamReply::Success {
                status: 200,
                body: UpstreamBody::Stream(Relayed),
            },
        }
    }
}

impl TraceSink for World {
    fn export(&self, _: &TenantId, _: &OtelExport, spans: Vec<Span>) {
        self.spans.borrow_mut().extend(spans);
    }
}

impl Ports for World {
    type Stream = Relayed;
    type Callers = Self;
    type Ledger = Self;
    type Cache = Self;
    type Events = Self;
    type Meter = Self;
    type Traces = Self;
    type Clock = FakeClock;
    type State<'a> = &'a World;
    type Upstream<'a> = Sent<'a>;
    type Observed<'a> = NothingObserved;

    fn callers(&self) -> &Self {
        self
    }
    fn ledger(&self) -> &Self {
        self
    }
    fn cache(&self) -> &Self {
        self
    }
    fn events(&self) -> &Self {
        self
    }
    fn meter(&self) -> &Self {
        self
    }
    fn clock(&self) -> &FakeClock {
        &self.clock
    }
    fn traces(&self) -> &Self {
        self
    }
    fn state<'a>(&'a self, _: &'a TenantId) -> &'a World {
        self
    }
    fn upstream<'a>(&'a self, _: &'a Inbound, s: Sending<'a>) -> Sent<'a> {
        Sent(self, s.trace, Cell::new(0))
    }
    fn observed<'a>(&'a self, _: &'a TenantId, _: u64) -> NothingObserved {
        NothingObserved
    }
    fn memory<R>(&self, f: impl FnOnce(&mut AffinityMemory) -> R) -> R {
        f(&mut AffinityMemory::new(16))
    }
    fn observe(
        &self,
        _: &TenantId,
        _: &[cognigate::cascade::CandidateAttempt],
        _: bool,
        _: Option<u64>,
    ) {
        self.observed.set(self.observed.get() + 1);
    }
}

/// A caller's request: headers, a body, and how often the body was read.
pub struct Request {
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    pub body_reads: Cell<usize>,
}

impl Request {
    pub fn new(token: &str, body: &str) -> Self {
        Self {
            headers: vec![("authorization", format!("Bearer {token}"))],
            body: body.to_owned(),
            body_reads: Cell::new(0),
        }
    }

    pub fn chat(token: &str, model: &str) -> Self {
        let body =
            format!(r#"{{"model":"{model}","messages":[{{"role":"user","content":"hi"}}]}}"#);
        Self::new(token, &body)
    }

    pub fn with(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }
}

impl Incoming for Request {
    fn header(&self, name: &str) -> Option<&str> {
        let found = self
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name));
        found.map(|(_, v)| v.as_str())
    }

    async fn body(&self, limit: usize) -> Result<Vec<u8>, ApiError> {
        self.body_reads.set(self.body_reads.get() + 1);
        if self.body.len() > limit {
            return Err(ApiError::body_too_large(limit));
        }
        Ok(self.body.clone().into_bytes())
    }
}
