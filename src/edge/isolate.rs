//! This isolate's state: what the worker keeps in one V8 isolate between requests, as one value
//! behind the edge's one `thread_local!`. Each field is its own cell, borrowed only inside a
//! closure of the module named on it, so no borrow spans another field's use or an `.await`.

use super::deployment::Deployment;
use super::local_grants::{Candidate, Scope};
use crate::callers::Memo;
use crate::config::caller_key::CallerKeyMac;
use crate::config::{CallerKey, SortedMap, SortedSet, TenantConfig, TenantId};
use crate::governance::budget_alert::Reported;
use crate::governance::{isolate::IsolateLedger, SettleEntry};
use crate::health::ProviderGrants;
use crate::metrics::counts::MetricCounts;
use crate::response_cache::recent::RecentEntries;
use crate::routing::affinity::{AffinityMemory, CAPACITY};
use crate::routing::open_breakers::OpenBreakers;
use crate::routing::stats::isolate_stats::IsolateStats;
use crate::traces::export::Exports;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

pub struct Isolate {
    /// The deployment vars, read once (`deployment`).
    pub deployment: OnceCell<Deployment>,
    /// The memo of tenant configs and caller keys, and the keys' MAC (`store`).
    pub configs: RefCell<Memo<TenantId, Rc<TenantConfig>>>,
    pub callers: RefCell<Memo<String, CallerKey>>,
    pub caller_mac: OnceCell<Option<CallerKeyMac>>,
    /// Which model served each conversation last (`affinity_memory`).
    pub affinity: RefCell<AffinityMemory>,
    /// Outcomes not yet with the routing object, and its last snapshots (`live_stats`).
    pub live_stats: RefCell<IsolateStats>,
    /// Breakers known open from this isolate's reports (`open_breakers`).
    pub open_breakers: RefCell<OpenBreakers>,
    /// The grant books, and the candidates with a grant-seeking `/acquire` in flight
    /// (`local_grants`).
    pub grants: RefCell<HashMap<Scope, ProviderGrants>>,
    pub acquiring: RefCell<HashSet<Candidate>>,
    /// The ledger's isolate side, made on first use (its id is random); the records waiting for
    /// their batch; the tenants with a retry task running (`ledger_client`).
    pub ledger: OnceCell<Rc<RefCell<IsolateLedger>>>,
    pub settle_buffers: RefCell<SortedMap<TenantId, Vec<SettleEntry>>>,
    pub settle_retrying: RefCell<SortedSet<TenantId>>,
    /// Counts not yet with the ledger; the tenants with a timed flush waiting (`metrics_sink`).
    pub metrics_pending: RefCell<SortedMap<TenantId, MetricCounts>>,
    pub metrics_timed: RefCell<SortedSet<TenantId>>,
    /// Whether the Analytics Engine binding exists; `None` until first asked (`analytics`).
    pub analytics_present: Cell<Option<bool>>,
    /// The scopes whose budget alert went out this window (`ports`, the budget alert).
    pub budget_reported: RefCell<Reported>,
    /// Copies of the response cache's recent entries (`ports`, the cache store).
    pub recent_entries: RefCell<RecentEntries>,
    /// Spans waiting for their tenant's receiver (`trace_export`).
    pub exports: Rc<RefCell<Exports>>,
}

impl Isolate {
    fn new() -> Self {
        Self {
            deployment: OnceCell::new(),
            configs: RefCell::new(Memo::new(super::store::UNSET)),
            callers: RefCell::new(Memo::new(super::store::UNSET)),
            caller_mac: OnceCell::new(),
            affinity: RefCell::new(AffinityMemory::new(CAPACITY)),
            live_stats: RefCell::default(),
            open_breakers: RefCell::default(),
            grants: RefCell::default(),
            acquiring: RefCell::default(),
            ledger: OnceCell::new(),
            settle_buffers: RefCell::new(SortedMap::new()),
            settle_retrying: RefCell::new(SortedSet::new()),
            metrics_pending: RefCell::new(SortedMap::new()),
            metrics_timed: RefCell::new(SortedSet::new()),
            analytics_present: Cell::new(None),
            budget_reported: RefCell::default(),
            recent_entries: RefCell::default(),
            exports: Rc::default(),
        }
    }
}

thread_local! {
    static ISOLATE: Isolate = Isolate::new();
}

/// Runs `f` over this isolate's state.
pub fn isolate<R>(f: impl FnOnce(&Isolate) -> R) -> R {
    ISOLATE.with(f)
}
