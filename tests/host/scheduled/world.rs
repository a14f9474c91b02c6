//! Fakes of every port of the scheduled pass: a watch list kept in the store's order (the
//! longest unvisited first), tenant configs, one routing state per tenant and provider, a
//! scripted upstream, and what was published and emitted.

use crate::support::fakes::{tenant, FakeClock};
use cognigate::cascade::{Call, Upstream, UpstreamReply};
use cognigate::config::{ModelId, ProviderName, TenantConfig, TenantId};
use cognigate::events::{Event, EventSink};
use cognigate::health::{AcquireRequest, Lease, ProviderState, ReportRequest, Verdict};
use cognigate::scheduled::{
    Alerts, Loaded, PassStore, PassView, Ports, ProviderStates, Visited, Watched,
};
use cognigate::surfaces::Inbound;
use cognigate::usage::retention::Cutoffs;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// What the store holds of a tenant.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    Config,
    Deleted,
    Unreadable,
}

/// A watch: the tenant id, when it was last visited, its stored degraded mode.
pub struct Watch {
    pub tenant: String,
    pub visited_at: u64,
    pub mode: Option<String>,
}

#[derive(Default)]
pub struct World {
    pub clock: FakeClock,
    pub watch: RefCell<Vec<Watch>>,
    pub watch_unreadable: Cell<bool>,
    pub stored: RefCell<BTreeMap<String, Stored>>,
    pub probes_off: Cell<bool>,
    /// Asked of the store, in order: `delete`, `watched <limit>`, `config <tenant>`,
    /// `visited <tenant>`.
    pub asked: RefCell<Vec<String>>,
    pub deleted: RefCell<Vec<Cutoffs>>,
    pub visits: RefCell<Vec<(String, Visited)>>,
    /// Config reads not yet answered by a `visited` (the visits in flight), and the most seen.
    pub in_flight: Cell<usize>,
    pub most_in_flight: Cell<usize>,
    pub states: RefCell<BTreeMap<String, ProviderState>>,
    /// `tenant/provider` objects whose pass view cannot be read.
    pub unreadable_views: RefCell<BTreeSet<String>>,
    /// The probe slot cannot be reached.
    pub probe_unreachable: Cell<bool>,
    pub probe_acquires: Cell<usize>,
    pub reports: Cell<usize>,
    /// The upstream's status for every call (200 unless set).
    pub upstream_status: Cell<u16>,
    /// `model` and the probe's `max_tokens` of each upstream call.
    pub sent: RefCell<Vec<(String, Option<String>)>>,
    pub alerts: RefCell<Vec<(String, String, u64, String)>>,
    pub events: RefCell<Vec<String>>,
}

impl World {
    pub fn at(now: u64) -> Self {
        let w = Self::default();
        w.clock.0.set(now);
        w.upstream_status.set(200);
        w
    }

    /// Watches `tenant` (last visited at `visited_at`), stored as `stored`.
    pub fn watch(&self, tenant: &str, visited_at: u64, stored: Stored) {
        self.watch.borrow_mut().push(Watch {
            tenant: tenant.to_owned(),
            visited_at,
            mode: None,
        });
        self.stored.borrow_mut().insert(tenant.to_owned(), stored);
    }

    /// `tenant`'s config: the support tenant (`p1`..`p3`, `m1`..`m3`) under its id, its
    /// breakers tripped by one failure.
    pub fn config(&self, tenant: &TenantId) -> TenantConfig {
        let mut cfg = tenant_config();
        cfg.tenant = tenant.clone();
        cfg.settings.probes = !self.probes_off.get();
        cfg
    }

    /// Trips `model`'s breaker on `provider` of `tenant` at `at` (open for 60 s).
    pub fn trip(&self, tenant: &str, provider: &str, model: &str, at: u64) {
        let cfg = tenant_config();
        let req = ReportRequest {
            model: ModelId::parse(model).unwrap(),
            parks: vec![],
            verdict: Verdict::Failure {
                reason: "server".into(),
            },
            probe: None,
            breaker: cfg.settings.breaker,
            scheduled: None,
        };
        let mut states = self.states.borrow_mut();
        let st = states.entry(format!("{tenant}/{provider}")).or_default();
        assert_eq!(st.report(&req, at).len(), 1, "the breaker opened");
    }

    /// The breakers of `tenant` not closed now, as `provider/model`.
    pub fn not_closed(&self, tenant: &str) -> Vec<String> {
        let now = self.clock.0.get();
        let states = self.states.borrow();
        let mut out = Vec::new();
        for (key, st) in states.iter().filter(|(k, _)| k.starts_with(tenant)) {
            for b in st.not_closed(now) {
                out.push(format!("{key}/{}", b.model.as_str()));
            }
        }
        out
    }

    pub fn visited(&self) -> Vec<String> {
        self.visits
            .borrow()
            .iter()
            .map(|(t, _)| t.clone())
            .collect()
    }

    pub fn configs_read(&self) -> Vec<String> {
        let asked = self.asked.borrow();
        let reads = asked.iter().filter_map(|a| a.strip_prefix("config "));
        reads.map(str::to_owned).collect()
    }

    /// The emitted events whose line contains `part`.
    pub fn events_with(&self, part: &str) -> Vec<String> {
        let events = self.events.borrow();
        events
            .iter()
            .filter(|e| e.contains(part))
            .cloned()
            .collect()
    }

    pub fn alert_kinds(&self) -> Vec<String> {
        let alerts = self.alerts.borrow();
        alerts.iter().map(|(_, kind, _, _)| kind.clone()).collect()
    }
}

/// The support tenant with breakers that open on one failure.
fn tenant_config() -> TenantConfig {
    let mut cfg = tenant(1, "failover");
    cfg.settings.breaker.error_threshold = 1;
    cfg
}

/// Pending once, then ready: a read that takes a turn of the executor, so visits overlap.
struct Turn(bool);

impl Future for Turn {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl PassStore for World {
    async fn delete_expired(&self, cutoffs: Cutoffs) {
        self.asked.borrow_mut().push("delete".to_owned());
        self.deleted.borrow_mut().push(cutoffs);
    }

    async fn watched(&self, limit: u32) -> Option<Vec<Watched>> {
        self.asked.borrow_mut().push(format!("watched {limit}"));
        if self.watch_unreadable.get() {
            return None;
        }
        let mut watch = self.watch.borrow_mut();
        // The store's order: the longest unvisited first, then by id.
        watch.sort_by(|a, b| (a.visited_at, &a.tenant).cmp(&(b.visited_at, &b.tenant)));
        let page = watch.iter().take(limit as usize);
        let page = page.map(|w| Watched {
            tenant_id: w.tenant.clone(),
            health_mode: w.mode.clone(),
        });
        Some(page.collect())
    }

    async fn config(&self, tenant: &TenantId) -> Loaded {
        self.asked.borrow_mut().push(format!("config {tenant}"));
        self.in_flight.set(self.in_flight.get() + 1);
        let most = self.most_in_flight.get().max(self.in_flight.get());
        self.most_in_flight.set(most);
        Turn(false).await;
        let stored = self.stored.borrow().get(tenant.as_str()).copied();
        let loaded = match stored.unwrap_or(Stored::Deleted) {
            Stored::Config => Loaded::Config(Box::new(self.config(tenant))),
            Stored::Deleted => Loaded::Deleted,
            Stored::Unreadable => Loaded::Unreadable,
        };
        if !matches!(loaded, Loaded::Config(_)) {
            self.in_flight.set(self.in_flight.get() - 1);
        }
        loaded
    }

    async fn visited(&self, tenant: &TenantId, visit: Visited) {
        self.asked.borrow_mut().push(format!("visited {tenant}"));
        if self.stored.borrow().get(tenant.as_str()) == Some(&Stored::Config) {
            self.in_flight.set(self.in_flight.get() - 1);
        }
        let mut watch = self.watch.borrow_mut();
        if let Some(w) = watch.iter_mut().find(|w| w.tenant == tenant.as_str()) {
            w.visited_at = visit.at;
            if let Some(mode) = &visit.mode {
                w.mode = mode.clone();
            }
        }
        if !visit.keep {
            watch.retain(|w| w.tenant != tenant.as_str());
        }
        let mut visits = self.visits.borrow_mut();
        visits.push((tenant.to_string(), visit));
    }
}

impl ProviderStates for World {
    type Error = String;

    async fn pass_view(
        &self,
        tenant: &TenantId,
        provider: &ProviderName,
    ) -> Result<PassView, String> {
        let key = format!("{tenant}/{provider}");
        if self.unreadable_views.borrow().contains(&key) {
            return Err("routing object answered 500".to_owned());
        }
        let now = self.clock.0.get();
        let states = self.states.borrow();
        let st = states.get(&key).cloned().unwrap_or_default();
        Ok(st.pass_view(now))
    }

    async fn acquire_probe(
        &self,
        tenant: &TenantId,
        provider: &ProviderName,
        req: AcquireRequest,
    ) -> Option<Lease> {
        self.probe_acquires.set(self.probe_acquires.get() + 1);
        if self.probe_unreachable.get() {
            return None;
        }
        let mut states = self.states.borrow_mut();
        let st = states.entry(format!("{tenant}/{provider}")).or_default();
        Some(st.acquire_probe(&req, self.clock.0.get()))
    }

    async fn report(&self, tenant: &TenantId, provider: &ProviderName, req: ReportRequest) {
        self.reports.set(self.reports.get() + 1);
        let mut states = self.states.borrow_mut();
        let st = states.entry(format!("{tenant}/{provider}")).or_default();
        st.report(&req, self.clock.0.get());
    }
}

impl Alerts for World {
    async fn publish(&self, tenant: &str, kind: &str, at: u64, body: &str) {
        let alert = (tenant.to_owned(), kind.to_owned(), at, body.to_owned());
        self.alerts.borrow_mut().push(alert);
    }
}

impl EventSink for World {
    fn emit(&self, event: &Event<'_>) {
        self.events.borrow_mut().push(event.to_line());
    }
}

/// The scripted upstream: every call answers `upstream_status`, 10 ms later.
pub struct Sent<'a> {
    world: &'a World,
    max_tokens: Option<String>,
}

impl Upstream for Sent<'_> {
    type Body = String;

    async fn send(&self, call: Call<'_>) -> UpstreamReply<String> {
        let model = call.model.upstream_model.clone();
        let max_tokens = self.max_tokens.clone();
        self.world.sent.borrow_mut().push((model, max_tokens));
        self.world.clock.advance(10);
        match self.world.upstream_status.get() {
            200 => UpstreamReply::Success {
                status: 200,
                body: "pong".to_owned(),
            },
            status => UpstreamReply::Status {
                status,
                retry_after: None,
                headers: Vec::new(),
                text: "overloaded".to_owned(),
            },
        }
    }
}

impl Ports for World {
    type Store = Self;
    type Routing = Self;
    type Alerts = Self;
    type Events = Self;
    type Clock = FakeClock;
    type Upstream<'a> = Sent<'a>;

    fn store(&self) -> &Self {
        self
    }
    fn routing(&self) -> &Self {
        self
    }
    fn alerts(&self) -> &Self {
        self
    }
    fn events(&self) -> &Self {
        self
    }
    fn clock(&self) -> &FakeClock {
        &self.clock
    }
    fn upstream<'a>(&'a self, probe: &'a Inbound, _: u64) -> Sent<'a> {
        Sent {
            world: self,
            max_tokens: probe.chat().raw("max_tokens").map(str::to_owned),
        }
    }
}
