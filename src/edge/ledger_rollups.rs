//! The ledger object's roll-ups: kept one storage value per row (`usage::rollup_store`),
//! flushed to D1 by the alarm on the schedule of `usage::flush_schedule`, idempotently per
//! flush number, and only for the tenant generation the ledger serves (`usage::generation`).
//! Every decision is in `usage/`; this file reads and writes storage and D1.

use super::d1::{Db, Flush, MAX_ROWS_PER_FLUSH};
use super::events::{fault, Fault};
use super::http::now_ms;
use super::ledger_object::{get_json, list_prefix};
use crate::config::TenantId;
use crate::governance::SettleEntry;
use crate::usage::flush_schedule::FlushSchedule;
use crate::usage::rollup_store::{
    LedgerMeta, RollupRows, StorageWrites, LEGACY_KEY, MAX_KEYS_PER_CALL, META_KEY, ROW_PREFIX,
};
use crate::usage::{PendingRollups, UsageRecord};
use serde::Deserialize;
use std::cell::{Cell, RefCell};
use worker::js_sys::{Date, Object, Reflect};
use worker::wasm_bindgen::JsValue;
use worker::{Result, ScheduledTime, Storage};

/// The value the pre-row layout kept under `LEGACY_KEY`.
#[derive(Deserialize)]
struct Legacy {
    tenant: Option<TenantId>,
    rows: PendingRollups,
}

/// `POST /wipe`: the generations of the deleted tenant (through this one), when D1 knew them.
#[derive(Debug, Default, serde::Serialize, Deserialize)]
pub struct WipeRequest {
    #[serde(default)]
    pub dead_through: Option<u64>,
}

/// Puts and deletes in calls of at most `MAX_KEYS_PER_CALL` keys each.
pub async fn write(storage: &Storage, w: StorageWrites) -> Result<()> {
    for chunk in w.puts.chunks(MAX_KEYS_PER_CALL) {
        let object = Object::new();
        for (k, v) in chunk {
            Reflect::set(&object, &JsValue::from_str(k), &JsValue::from_str(v))?;
        }
        storage.put_multiple_raw(object).await?;
    }
    for chunk in w.deletes.chunks(MAX_KEYS_PER_CALL) {
        storage.delete_multiple(chunk.to_vec()).await?;
    }
    Ok(())
}

/// Roll-ups, flush bookkeeping and the flush schedule of one ledger object.
pub struct Rollups {
    loaded: Cell<bool>,
    rows: RefCell<RollupRows>,
    meta: RefCell<LedgerMeta>,
    meta_dirty: Cell<bool>,
    schedule: Cell<FlushSchedule>,
}

impl Default for Rollups {
    fn default() -> Self {
        Self {
            loaded: Cell::new(false),
            rows: RefCell::new(RollupRows::default()),
            meta: RefCell::new(LedgerMeta::default()),
            meta_dirty: Cell::new(false),
            schedule: Cell::new(FlushSchedule::Idle),
        }
    }
}

impl Rollups {
    /// Reads the rows, the bookkeeping and the alarm once per object instance; a value left by
    /// the single-value layout is folded into rows.
    pub async fn ensure_loaded(&self, storage: &Storage) -> Result<()> {
        if self.loaded.get() {
            return Ok(());
        }
        let stored = list_prefix(storage, ROW_PREFIX).await?;
        let meta: Option<LedgerMeta> = get_json(storage, META_KEY).await?;
        let legacy: Option<Legacy> = get_json(storage, LEGACY_KEY).await.unwrap_or(None);
        let alarm = storage.get_alarm().await?;
        if self.loaded.get() {
            return Ok(());
        }
        let (mut rows, bad) = RollupRows::load(stored);
        if bad > 0 {
            fault(Fault::RollupRowsUnreadable { rows: bad });
        }
        let mut meta = meta.unwrap_or_default();
        if let Some(legacy) = legacy {
            meta.tenant = meta.tenant.or(legacy.tenant);
            rows.absorb_legacy(legacy.rows);
            self.meta_dirty.set(true);
        }
        let alarm_at = alarm.and_then(|a| u64::try_from(a).ok());
        self.schedule
            .set(FlushSchedule::restore(alarm_at, meta.failures));
        *self.rows.borrow_mut() = rows;
        *self.meta.borrow_mut() = meta;
        self.loaded.set(true);
        if self.meta_dirty.get() {
            let mut w = self.take_writes()?;
            w.deletes.push(LEGACY_KEY.to_owned());
            write(storage, w).await?;
        }
        Ok(())
    }

    /// Keeps the entries of the generation this ledger serves. `true`: a newer generation
    /// arrived, so the caller must forget every counter (`reset`) before settling.
    pub fn gate(&self, entries: Vec<SettleEntry>) -> (Vec<SettleEntry>, bool) {
        let mut meta = self.meta.borrow_mut();
        let generations: Vec<u64> = entries.iter().map(|e| e.record.generation).collect();
        let before = meta.gate;
        let (keep, reset) = meta.gate.sort(&generations);
        if meta.gate != before {
            self.meta_dirty.set(true);
        }
        let total = entries.len();
        let tenant = entries.first().map(|e| e.record.tenant.clone());
        let kept: Vec<SettleEntry> = entries
            .into_iter()
            .zip(keep)
            .filter_map(|(e, k)| k.then_some(e))
            .collect();
        if kept.len() < total {
            fault(Fault::GenerationUsageDropped {
                tenant: tenant.as_ref().map(|t| t.as_str()),
                records: total - kept.len(),
            });
        }
        (kept, reset)
    }

    /// The tenant was created again: the old generation's rows and storage go (the generation
    /// gate and the flush numbering stay).
    pub async fn reset(&self, storage: &Storage) -> Result<()> {
        storage.delete_all().await?;
        self.forget(storage, |_| {}).await
    }

    /// Storage was just emptied: the rows go from memory too, and the bookkeeping (`edit`ed,
    /// its failure count reset) is written back.
    async fn forget(&self, storage: &Storage, edit: impl FnOnce(&mut LedgerMeta)) -> Result<()> {
        self.rows.borrow_mut().clear();
        {
            let mut meta = self.meta.borrow_mut();
            edit(&mut meta);
            meta.failures = 0;
        }
        // Whether `delete_all` took the alarm too depends on the runtime: schedule afresh.
        self.schedule.set(FlushSchedule::Idle);
        self.meta_dirty.set(true);
        let w = self.take_writes()?;
        write(storage, w).await
    }

    pub fn add(&self, record: &UsageRecord, requests: u64) {
        let mut meta = self.meta.borrow_mut();
        if meta.tenant.as_ref() != Some(&record.tenant) {
            meta.tenant = Some(record.tenant.clone());
            self.meta_dirty.set(true);
        }
        self.rows.borrow_mut().add_counted(record, requests);
    }

    /// What storage needs to match memory: changed rows, and the bookkeeping if it changed.
    pub fn take_writes(&self) -> Result<StorageWrites> {
        let mut w = self.rows.borrow_mut().take_writes();
        if self.meta_dirty.replace(false) {
            let meta = serde_json::to_string(&*self.meta.borrow())?;
            w.puts.push((META_KEY.to_owned(), meta));
        }
        Ok(w)
    }

    /// Roll-ups are pending: sets the flush alarm unless one is set (a retry included).
    pub async fn schedule_flush(&self, storage: &Storage, now_ms: u64) -> Result<()> {
        if self.rows.borrow().is_empty() {
            return Ok(());
        }
        let (next, alarm) = self.schedule.get().pending(now_ms);
        self.set_alarm(storage, alarm).await?;
        self.schedule.set(next);
        Ok(())
    }

    async fn set_alarm(&self, storage: &Storage, alarm: Option<u64>) -> Result<()> {
        if let Some(at_ms) = alarm {
            // An absolute time: `ScheduledTime` reads a bare integer as an offset from now.
            let at = Date::new(&JsValue::from_f64(at_ms as f64));
            storage.set_alarm(ScheduledTime::new(at)).await?;
        }
        Ok(())
    }

    /// Sends one flush: the one in flight again, else the next rows under a new number. The
    /// rows are stored as taken before D1 sees them, so a restart sends the same flush again.
    pub async fn flush(&self, storage: &Storage, db: Result<Db>) -> Result<()> {
        let Err(e) = self.try_flush(storage, db).await else {
            return Ok(());
        };
        // Storage itself failed: the flush is retried like a failed D1 write, so the schedule
        // never stays "flushing" with no alarm left to end it.
        fault(Fault::RollupFlushFailed { error: &e });
        let (next, alarm) = self.schedule.get().alarm_fired().failed(now_ms());
        self.schedule.set(next);
        self.set_alarm(storage, alarm).await
    }

    async fn try_flush(&self, storage: &Storage, db: Result<Db>) -> Result<()> {
        self.ensure_loaded(storage).await?;
        self.schedule.set(self.schedule.get().alarm_fired());
        let next_seq = self.meta.borrow().next_seq;
        let Some(batch) = self.rows.borrow_mut().batch(MAX_ROWS_PER_FLUSH, next_seq) else {
            // Nothing left to flush: what a successful flush with no rows remaining leaves.
            self.schedule.set(FlushSchedule::Idle);
            return Ok(());
        };
        let (tenant, generation) = {
            let mut meta = self.meta.borrow_mut();
            if batch.seq >= meta.next_seq {
                meta.next_seq = batch.seq.saturating_add(1);
                self.meta_dirty.set(true);
            }
            (meta.tenant.clone(), meta.gate.current.unwrap_or(0))
        };
        let w = self.take_writes()?;
        write(storage, w).await?;
        let written = match (tenant.as_ref(), db) {
            (Some(tenant), Ok(db)) => {
                let flush = Flush {
                    tenant,
                    generation,
                    seq: batch.seq,
                    rows: &batch.rows,
                };
                db.add_rollups(&flush)
                    .await
                    .map_err(|e| format!("{}: {}", e.op(), e.cause()))
            }
            // Rows without a tenant cannot be written anywhere: they are dropped.
            (None, _) => Ok(()),
            (_, Err(e)) => Err(e.to_string()),
        };
        let now = now_ms();
        let (next, alarm) = match written {
            Ok(()) => {
                self.rows.borrow_mut().flushed(batch.seq);
                let remaining = self.rows.borrow().pending_rows();
                self.schedule
                    .get()
                    .flushed(now, remaining, MAX_ROWS_PER_FLUSH)
            }
            Err(e) => {
                fault(Fault::RollupsNotFlushed {
                    tenant: tenant.as_ref().map(|t| t.as_str()),
                    flush: batch.seq,
                    rows: batch.rows.len(),
                    error: &e,
                });
                self.schedule.get().failed(now)
            }
        };
        {
            let mut meta = self.meta.borrow_mut();
            if meta.failures != next.failures() {
                meta.failures = next.failures();
                self.meta_dirty.set(true);
            }
        }
        let w = self.take_writes()?;
        write(storage, w).await?;
        self.set_alarm(storage, alarm).await?;
        self.schedule.set(next);
        Ok(())
    }

    /// The tenant was deleted: everything goes, and the tombstone stays so that usage of the
    /// deleted generations arriving later is dropped (a later generation is served).
    pub async fn wipe(&self, storage: &Storage, req: WipeRequest) -> Result<()> {
        self.ensure_loaded(storage).await?;
        storage.delete_all().await?;
        storage.delete_alarm().await?;
        self.forget(storage, |meta| {
            meta.gate.wipe(req.dead_through);
            meta.tenant = None;
        })
        .await
    }
}
