//! The ledger Durable Object: one per tenant, holding the counters its limits need (request and
//! token minutes in memory, spend per scope in storage) and the usage roll-ups not yet in D1,
//! which an alarm flushes in one batch. Every decision is `crate::governance::Ledger`'s; this
//! file loads scopes, stores what changed and schedules the flush. Its client is `ledger_client`.

use super::d1::{Db, MAX_ROWS_PER_FLUSH};
use super::http::now_ms;
use crate::config::TenantId;
use crate::governance::admission::KEY_SPEND_PREFIX;
use crate::governance::settle::Rollup;
use crate::governance::{AdmitRequest, Ledger, ScopeId, SettleEntry};
use crate::usage::spend::Spend;
use crate::usage::PendingRollups;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::time::Duration;
use worker::js_sys::{Object, Reflect};
use worker::wasm_bindgen::JsValue;
use worker::{
    console_error, durable_object, DurableObject, Env, Method, Request, Response, Result, State,
    Storage,
};

/// Values are stored as JSON text: exact for every number the ledger holds, and read back the
/// way they were written whatever structured clone makes of maps.
async fn get_json<T: serde::de::DeserializeOwned>(
    storage: &Storage,
    key: &str,
) -> Result<Option<T>> {
    let text: Option<String> = storage.get(key).await?;
    text.map(|t| serde_json::from_str(&t).map_err(worker::Error::from))
        .transpose()
}

async fn put_json_many(storage: &Storage, values: &[(String, String)]) -> Result<()> {
    let object = Object::new();
    for (k, v) in values {
        Reflect::set(&object, &JsValue::from_str(k), &JsValue::from_str(v))?;
    }
    storage.put_multiple_raw(object).await
}

/// Roll-ups wait at most this long for their flush once the first of them arrives: with the
/// isolates' one-second batching, a served request is in the usage API within about 3 s.
const FLUSH_AFTER_MS: u64 = 2_000;
/// After a failed flush the rows stay pending (in storage too) and the next try waits longer.
const RETRY_FLUSH_AFTER_MS: u64 = 30_000;
const ROLLUPS_KEY: &str = "rollups";

/// The roll-ups not yet flushed, and the tenant they belong to (kept with them, so the alarm
/// knows where to write after an eviction).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Unflushed {
    tenant: Option<TenantId>,
    rows: PendingRollups,
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
    ledger: RefCell<Ledger>,
    unflushed: RefCell<Option<Unflushed>>,
    /// An alarm is scheduled (memory only: after an eviction one more `set_alarm` is harmless).
    alarm_set: Cell<bool>,
}

impl DurableObject for LedgerObject {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            ledger: RefCell::new(Ledger::default()),
            unflushed: RefCell::new(None),
            alarm_set: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        match (req.method(), req.path().as_str()) {
            (Method::Post, "/acquire") => {
                let body: AdmitRequest = req.json().await?;
                self.load_scopes(body.scopes()).await?;
                // Decided on memory with no await in between: concurrent requests each see
                // the others' counts and holds. Rates and holds are memory only, so admission
                // writes nothing.
                let answer = self.ledger.borrow_mut().acquire(&body, now_ms());
                self.log_released();
                Response::from_json(&answer)
            }
            (Method::Post, "/settle") => {
                let entries: Vec<SettleEntry> = req.json().await?;
                self.settle(entries).await?;
                Response::from_json(&serde_json::json!({}))
            }
            (Method::Post, "/spend") => {
                let body: SpendRequest = req.json().await?;
                let ids: Vec<ScopeId> = body.keys.into_iter().map(ScopeId::Key).collect();
                self.load_scopes(ids.clone()).await?;
                let ledger = self.ledger.borrow();
                let spends: BTreeMap<String, Spend> = ids
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
                self.state.storage().delete_all().await?;
                self.state.storage().delete_alarm().await?;
                *self.ledger.borrow_mut() = Ledger::default();
                *self.unflushed.borrow_mut() = Some(Unflushed::default());
                self.alarm_set.set(false);
                Response::from_json(&serde_json::json!({}))
            }
            _ => Response::error("no such ledger route", 404),
        }
    }

    /// Writes every pending roll-up to D1 in one batch. A failure keeps them pending and tries
    /// again later; rows that arrive meanwhile wait for the next flush.
    async fn alarm(&self) -> Result<Response> {
        self.alarm_set.set(false);
        self.ensure_unflushed().await?;
        let (tenant, rows) = {
            let mut u = self.unflushed.borrow_mut();
            let u = u.get_or_insert_with(Unflushed::default);
            (u.tenant.clone(), u.rows.take(MAX_ROWS_PER_FLUSH))
        };
        let (Some(tenant), false) = (tenant, rows.is_empty()) else {
            return Response::ok("nothing to flush");
        };
        let written = match Db::open(&self.env) {
            Ok(db) => db.add_rollups(&tenant, &rows).await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            console_error!(
                "{}",
                serde_json::json!({"msg": "usage roll-ups not flushed; kept for the next try", "tenant": tenant, "rows": rows.len(), "op": e.op(), "error": e.cause()})
            );
            if let Some(u) = self.unflushed.borrow_mut().as_mut() {
                u.rows.restore(rows);
            }
            self.schedule_flush(RETRY_FLUSH_AFTER_MS).await?;
        }
        self.store_unflushed().await?;
        if self.has_unflushed() {
            self.schedule_flush(FLUSH_AFTER_MS).await?;
        }
        Response::ok("flushed")
    }
}

impl LedgerObject {
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

    async fn ensure_unflushed(&self) -> Result<()> {
        if self.unflushed.borrow().is_some() {
            return Ok(());
        }
        let stored: Option<Unflushed> = get_json(&self.state.storage(), ROLLUPS_KEY).await?;
        let mut u = self.unflushed.borrow_mut();
        if u.is_none() {
            *u = Some(stored.unwrap_or_default());
        }
        Ok(())
    }

    fn has_unflushed(&self) -> bool {
        self.unflushed
            .borrow()
            .as_ref()
            .is_some_and(|u| !u.rows.is_empty())
    }

    async fn store_unflushed(&self) -> Result<()> {
        let snapshot = serde_json::to_string(&self.unflushed.borrow().clone().unwrap_or_default())?;
        put_json_many(&self.state.storage(), &[(ROLLUPS_KEY.to_owned(), snapshot)]).await
    }

    async fn schedule_flush(&self, after_ms: u64) -> Result<()> {
        self.state
            .storage()
            .set_alarm(Duration::from_millis(after_ms))
            .await?;
        self.alarm_set.set(true);
        Ok(())
    }

    /// Reservations and slices released unsettled at their expiry: a record that never came.
    fn log_released(&self) {
        for r in self.ledger.borrow_mut().take_released() {
            console_error!(
                "{}",
                serde_json::json!({"msg": "reservation released unsettled", "scope": r.scope, "hold": r.id, "usd": r.hold.usd, "tokens": r.hold.tokens, "requests": r.hold.requests})
            );
        }
    }

    /// Adds each finished request to its scopes and to the roll-ups, then stores the spends that
    /// changed and the roll-ups together. Memory is not rolled back if that write fails: it then
    /// holds more spend than storage, which can only refuse sooner, never overspend.
    async fn settle(&self, entries: Vec<SettleEntry>) -> Result<()> {
        self.ensure_unflushed().await?;
        let scopes: Vec<ScopeId> = entries.iter().flat_map(Ledger::scopes_of).collect();
        self.load_scopes(scopes).await?;
        let now = now_ms();
        let mut changed = Vec::new();
        {
            let mut ledger = self.ledger.borrow_mut();
            let mut unflushed = self.unflushed.borrow_mut();
            let u = unflushed.get_or_insert_with(Unflushed::default);
            for entry in &entries {
                let settled = ledger.settle(entry, now);
                changed.extend(settled.changed);
                u.tenant.get_or_insert_with(|| entry.record.tenant.clone());
                match settled.rollup {
                    Rollup::Record(requests) => u.rows.add_counted(&entry.record, requests),
                    Rollup::Difference(delta) => u.rows.add_counted(&delta, 0),
                    Rollup::Nothing => {}
                }
            }
            ledger.forget_idle_end_users(now);
        }
        self.log_released();
        changed.sort();
        changed.dedup();
        let mut writes = Vec::with_capacity(changed.len() + 1);
        {
            let ledger = self.ledger.borrow();
            for id in changed {
                if let Some(spend) = ledger.spend(&id) {
                    writes.push((id.storage_key(), serde_json::to_string(&spend)?));
                }
            }
            let snapshot =
                serde_json::to_string(&self.unflushed.borrow().clone().unwrap_or_default())?;
            writes.push((ROLLUPS_KEY.to_owned(), snapshot));
        }
        put_json_many(&self.state.storage(), &writes).await?;
        if !self.alarm_set.get() && self.has_unflushed() {
            self.schedule_flush(FLUSH_AFTER_MS).await?;
        }
        Ok(())
    }
}
