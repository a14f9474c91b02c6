//! The ledger Durable Object: one per tenant, holding the counters its limits need (request and
//! token minutes and holds in memory, spend per scope and settled request ids in storage) and the
//! usage roll-ups not yet in D1, which an alarm flushes in batches. Every decision is
//! `crate::governance::Ledger`'s; this file loads scopes and stores what changed, and keeps a
//! timer pending while anything is held; the roll-ups, their flush and the wipe are in
//! `ledger_rollups`. Its client is `ledger_client`.

use super::d1::Db;
use super::events::{fault, Fault};
use super::http::{json_body, now_ms};
use super::ledger_metrics::{LedgerMetrics, METRICS_HEADER};
use super::ledger_rollups::{self, Rollups, WipeRequest};
use crate::config::SortedMap;
use crate::governance::admission::KEY_SPEND_PREFIX;
use crate::governance::lease::{RenewRequest, Renewed};
use crate::governance::settle::Rollup;
use crate::governance::settled::SETTLED_PREFIX;
use crate::governance::{AdmitRequest, Ledger, ScopeId, SettleEntry};
use crate::metrics::counts::MetricCounts;
use crate::usage::spend::Spend;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;
use worker::wasm_bindgen_futures::spawn_local;
use worker::{
    durable_object, Delay, DurableObject, Env, ListOptions, Method, Request, Response, Result,
    State, Storage,
};

/// Values are stored as JSON text: exact for every number the ledger holds, and read back the
/// way they were written whatever structured clone makes of maps.
pub(super) async fn get_json<T: serde::de::DeserializeOwned>(
    storage: &Storage,
    key: &str,
) -> Result<Option<T>> {
    let text: Option<String> = storage.get(key).await?;
    text.map(|t| serde_json::from_str(&t).map_err(worker::Error::from))
        .transpose()
}

/// Every stored key under `prefix`, with its value.
pub(super) async fn list_prefix(storage: &Storage, prefix: &str) -> Result<Vec<(String, String)>> {
    let listed = storage
        .list_with_options(ListOptions::new().prefix(prefix))
        .await?;
    let mut stored = Vec::new();
    listed.for_each(&mut |value, key| {
        if let (Some(k), Some(v)) = (key.as_string(), value.as_string()) {
            stored.push((k, v));
        }
    });
    Ok(stored)
}

/// Reservations and slices released unsettled at their expiry: a record that never came, or a
/// request that stopped renewing its hold.
fn log_released(ledger: &RefCell<Ledger>) {
    let released = ledger.borrow_mut().take_released();
    for r in released {
        fault(Fault::ReservationReleased {
            scope: &r.scope,
            hold: &r.id,
            usd: r.hold.usd,
            tokens: r.hold.tokens,
            requests: r.hold.requests,
        });
    }
}

/// `POST /spend`: the keys whose spend the admin list shows.
#[derive(Serialize, Deserialize)]
pub struct SpendRequest {
    pub keys: Vec<String>,
}

#[durable_object]
pub struct LedgerObject {
    state: State,
    env: Env,
    ledger: Rc<RefCell<Ledger>>,
    /// A keep-awake timer is pending (`stay_awake`).
    awake: Rc<Cell<bool>>,
    rollups: Rollups,
    metrics: LedgerMetrics,
}

impl DurableObject for LedgerObject {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            ledger: Rc::new(RefCell::new(Ledger::default())),
            awake: Rc::new(Cell::new(false)),
            rollups: Rollups::default(),
            metrics: LedgerMetrics::default(),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let answer = self.route(req).await;
        self.stay_awake();
        answer
    }

    /// Sends one flush of roll-ups to D1 (`ledger_rollups`), and schedules the next.
    async fn alarm(&self) -> Result<Response> {
        let db = Db::open(&self.env)
            .map_err(|e| worker::Error::RustError(format!("{}: {}", e.op(), e.cause())));
        self.rollups.flush(&self.state.storage(), db).await?;
        Response::ok("flushed")
    }
}

impl LedgerObject {
    async fn route(&self, mut req: Request) -> Result<Response> {
        match (req.method(), req.path().as_str()) {
            (Method::Post, "/acquire") => {
                let body: AdmitRequest = json_body(&mut req).await?;
                self.load_scopes(body.scopes()).await?;
                // Decided on memory with no await in between: concurrent requests each see
                // the others' counts and holds. Rates and holds are memory only, so admission
                // writes nothing.
                let answer = self.ledger.borrow_mut().acquire(&body, now_ms());
                self.log_released();
                Response::from_json(&answer)
            }
            (Method::Post, "/renew") => {
                // Memory only, like the holds: a renewal writes nothing.
                let body: RenewRequest = json_body(&mut req).await?;
                let renewed = self.ledger.borrow_mut().renew(&body, now_ms());
                self.log_released();
                Response::from_json(&Renewed { renewed })
            }
            (Method::Post, "/settle") => {
                let riding = req.headers().get(METRICS_HEADER)?;
                let entries: Vec<SettleEntry> = json_body(&mut req).await?;
                self.settle(entries).await?;
                // The isolate drops its metrics batch only when told it was added.
                let added = match riding.map(|t| serde_json::from_str::<MetricCounts>(&t)) {
                    Some(Ok(batch)) => self.metrics.add(&self.state, &batch).await?,
                    _ => false,
                };
                Response::from_json(&serde_json::json!({"metrics": added}))
            }
            (Method::Post, "/metrics") => {
                let batch: MetricCounts = json_body(&mut req).await?;
                let added = self.metrics.add(&self.state, &batch).await?;
                Response::from_json(&serde_json::json!({"metrics": added}))
            }
            (Method::Get, "/metrics") => {
                Response::from_json(&self.metrics.read(&self.state).await?)
            }
            (Method::Post, "/spend") => {
                let body: SpendRequest = json_body(&mut req).await?;
                let ids: Vec<ScopeId> = body.keys.into_iter().map(ScopeId::Key).collect();
                self.load_scopes(ids.clone()).await?;
                let ledger = self.ledger.borrow();
                let spends: SortedMap<String, Spend> = ids
                    .into_iter()
                    .filter_map(|id| {
                        let spend = ledger.spend(&id)?;
                        let key = id.storage_key().strip_prefix(KEY_SPEND_PREFIX)?.to_owned();
                        Some((key, spend))
                    })
                    .collect();
                Response::from_json(&spends)
            }
            (Method::Post, "/wipe") => {
                let body: WipeRequest = json_body(&mut req).await.unwrap_or_default();
                self.rollups.wipe(&self.state.storage(), body).await?;
                *self.ledger.borrow_mut() = Ledger::default();
                self.metrics.forget();
                Response::from_json(&serde_json::json!({}))
            }
            _ => Response::error("no such ledger route", 404),
        }
    }

    /// While anything is held, keeps one timer pending (`Ledger::awake_until`): the runtime
    /// drops an object idle for 10 s from memory unless a timer is pending, and with it the
    /// holds of requests still running. The timer also releases lapsed holds on time.
    fn stay_awake(&self) {
        if self.awake.get() || self.ledger.borrow_mut().awake_until(now_ms()).is_none() {
            log_released(&self.ledger);
            return;
        }
        self.awake.set(true);
        let (ledger, awake) = (Rc::clone(&self.ledger), Rc::clone(&self.awake));
        spawn_local(async move {
            loop {
                let now = now_ms();
                let next = ledger.borrow_mut().awake_until(now);
                log_released(&ledger);
                let Some(at) = next else {
                    break;
                };
                Delay::from(Duration::from_millis(at.saturating_sub(now))).await;
            }
            awake.set(false);
        });
    }

    /// Reads the stored spend of each scope memory does not hold yet.
    async fn load_scopes(&self, ids: Vec<ScopeId>) -> Result<()> {
        for id in ids {
            if self.ledger.borrow().is_loaded(&id) {
                continue;
            }
            let stored: Option<Spend> = get_json(&self.state.storage(), &id.storage_key()).await?;
            self.ledger.borrow_mut().load(id, stored);
        }
        Ok(())
    }

    fn log_released(&self) {
        log_released(&self.ledger);
    }

    /// Adds each finished request to its scopes and to the roll-ups, then stores the spends that
    /// changed and the roll-up rows. Memory is not rolled back if that write fails: it then
    /// holds more spend than storage, which can only refuse sooner, never overspend. Records of
    /// a deleted tenant generation are dropped first (`ledger_rollups::Rollups::gate`).
    async fn settle(&self, entries: Vec<SettleEntry>) -> Result<()> {
        let storage = self.state.storage();
        self.rollups.ensure_loaded(&storage).await?;
        let (entries, reset) = self.rollups.gate(entries);
        if reset {
            self.rollups.reset(&storage).await?;
            *self.ledger.borrow_mut() = Ledger::default();
        }
        let scopes: Vec<ScopeId> = entries.iter().flat_map(Ledger::scopes_of).collect();
        self.load_scopes(scopes).await?;
        if !self.ledger.borrow().settled_loaded() {
            let stored = list_prefix(&storage, SETTLED_PREFIX).await?;
            self.ledger.borrow_mut().load_settled(stored, now_ms());
        }
        let now = now_ms();
        let mut changed = Vec::new();
        {
            let mut ledger = self.ledger.borrow_mut();
            for entry in &entries {
                let settled = ledger.settle(entry, now);
                changed.extend(settled.changed);
                match settled.rollup {
                    Rollup::Record(requests) => self.rollups.add(&entry.record, requests),
                    Rollup::Difference(delta) => self.rollups.add(&delta, 0),
                    Rollup::Nothing => {}
                }
            }
            ledger.forget_idle_end_users(now);
        }
        self.log_released();
        crate::config::sort::sort(&mut changed);
        changed.dedup();
        let mut writes = self.rollups.take_writes()?;
        {
            // The ids settled go in the same write as what settling them changed.
            let settled = self.ledger.borrow_mut().take_settled_writes();
            writes.puts.extend(settled.puts);
            writes.deletes.extend(settled.deletes);
            let ledger = self.ledger.borrow();
            for id in changed {
                if let Some(spend) = ledger.spend(&id) {
                    writes
                        .puts
                        .push((id.storage_key(), serde_json::to_string(&spend)?));
                }
            }
        }
        ledger_rollups::write(&storage, writes).await?;
        self.rollups.schedule_flush(&storage, now).await
    }
}
