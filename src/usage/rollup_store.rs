//! How the ledger keeps its roll-ups in Durable Object storage until D1 has them.
//!
//! Layout: one storage value per roll-up row (`ru:` + the row's identity as JSON), so no value
//! grows with the number of end users; every value this layout writes is under
//! `MAX_VALUE_BYTES`. Spend stays one small value per scope (`governance::ScopeId`). One value,
//! `LedgerMeta`, holds the tenant, its generation, the flush sequence and the failure count.
//!
//! Idempotent flushes: a row taken into a flush keeps those sums apart (`in_flight`, with the
//! flush's sequence number) from what arrives after. The rows are stored that way before D1 is
//! written, and D1 applies a sequence number at most once per tenant generation
//! (`usage_flushes`). After a restart the same rows go again under the same number; a flush
//! that already reached D1 is then a no-op. Only one flush is in flight at a time, and
//! sequence numbers only grow, so "applied" is "at most the last applied number".

use super::generation::GenerationGate;
use super::rollup::{PendingRollups, RollupKey, UsageSums};
use super::UsageRecord;
use crate::config::TenantId;
use crate::config::{SortedMap, SortedSet};
use serde::{Deserialize, Serialize};

pub const ROW_PREFIX: &str = "ru:";
pub const META_KEY: &str = "rollups:meta";
/// Where every pending roll-up used to live in one value; read once and folded into rows.
pub const LEGACY_KEY: &str = "rollups";
/// The stated bound on each value this layout writes. The Durable Object limit is 128 KiB per
/// value (2 KiB per key); a row is at most about 1 KiB (a 128-character model id, a 63-character
/// provider, a key id, a 128-byte end user, two sets of sums).
pub const MAX_VALUE_BYTES: usize = 2 * 1024;
/// Keys one storage `put` or `delete` call may carry (the Durable Object storage API's limit).
pub const MAX_KEYS_PER_CALL: usize = 128;

/// The ledger's roll-up bookkeeping, stored under `META_KEY`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerMeta {
    /// The tenant the rows belong to (kept so the alarm knows where to write after an eviction).
    #[serde(default)]
    pub tenant: Option<TenantId>,
    #[serde(default)]
    pub gate: GenerationGate,
    /// The sequence number the next flush takes; never reset, not even by a wipe.
    #[serde(default)]
    pub next_seq: u64,
    /// Flushes that failed in a row (the backoff survives an eviction).
    #[serde(default)]
    pub failures: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct InFlight {
    pub seq: u64,
    pub sums: UsageSums,
}

/// One stored roll-up row: the sums not yet in any flush, and those of the flush in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredRow {
    pub key: RollupKey,
    #[serde(default)]
    pub pending: UsageSums,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<InFlight>,
}

impl StoredRow {
    fn is_empty(&self) -> bool {
        self.pending == UsageSums::default() && self.in_flight.is_none()
    }
}

/// What storage must do to match memory: values to put, keys to delete.
#[derive(Debug, Default, PartialEq)]
pub struct StorageWrites {
    pub puts: Vec<(String, String)>,
    pub deletes: Vec<String>,
}

/// One flush: its sequence number and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub seq: u64,
    pub rows: Vec<(RollupKey, UsageSums)>,
}

/// The rows of one ledger, in memory, with the keys changed since the last `take_writes`.
#[derive(Debug, Default)]
pub struct RollupRows {
    rows: SortedMap<String, StoredRow>,
    dirty: SortedSet<String>,
}

/// The storage key of a row: its identity, so equal rows meet in one value.
fn row_storage_key(key: &RollupKey) -> String {
    format!(
        "{ROW_PREFIX}{}",
        serde_json::to_string(key).unwrap_or_default()
    )
}

impl RollupRows {
    /// The rows as stored (`ROW_PREFIX` keys and their values). A value that does not parse is
    /// skipped and counted, never fatal: it would block every later flush.
    pub fn load(stored: impl IntoIterator<Item = (String, String)>) -> (Self, usize) {
        let mut me = Self::default();
        let mut bad = 0;
        for (k, v) in stored {
            match serde_json::from_str::<StoredRow>(&v) {
                Ok(row) => {
                    me.rows.insert(k, row);
                }
                Err(_) => {
                    bad += 1;
                    me.dirty.insert(k);
                }
            }
        }
        (me, bad)
    }

    /// Folds the pre-row layout's single value in as pending sums.
    pub fn absorb_legacy(&mut self, legacy: PendingRollups) {
        for (key, sums) in legacy.into_rows() {
            self.add_sums(key, &sums);
        }
    }

    pub fn add(&mut self, record: &UsageRecord) {
        self.add_counted(record, 1);
    }

    /// A record standing for `requests` requests (`PendingRollups::add_counted`: folded records,
    /// or 0 for a late report's difference).
    pub fn add_counted(&mut self, record: &UsageRecord, requests: u64) {
        self.add_sums(RollupKey::of(record), &UsageSums::counted(record, requests));
    }

    fn add_sums(&mut self, key: RollupKey, sums: &UsageSums) {
        let id = row_storage_key(&key);
        self.rows
            .entry(id.clone())
            .or_insert_with(|| StoredRow {
                key,
                pending: UsageSums::default(),
                in_flight: None,
            })
            .pending
            .add(sums);
        self.dirty.insert(id);
    }

    /// Rows with anything not yet in D1.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Rows whose sums wait for a flush (not counting the one in flight).
    pub fn pending_rows(&self) -> usize {
        self.rows
            .values()
            .filter(|r| r.pending != UsageSums::default())
            .count()
    }

    /// The flush to send: the one in flight (again, under its own number, after a failure or a
    /// restart), else up to `max` pending rows taken under `next_seq`.
    pub fn batch(&mut self, max: usize, next_seq: u64) -> Option<Batch> {
        let in_flight = self
            .rows
            .values()
            .filter_map(|r| r.in_flight.map(|f| f.seq))
            .min();
        if let Some(seq) = in_flight {
            let rows = self
                .rows
                .values()
                .filter_map(|r| {
                    let f = r.in_flight.filter(|f| f.seq == seq)?;
                    Some((r.key.clone(), f.sums))
                })
                .collect();
            return Some(Batch { seq, rows });
        }
        let mut rows = Vec::new();
        for (id, row) in self.rows.iter_mut() {
            if rows.len() >= max {
                break;
            }
            if row.pending == UsageSums::default() {
                continue;
            }
            let sums = std::mem::take(&mut row.pending);
            row.in_flight = Some(InFlight {
                seq: next_seq,
                sums,
            });
            rows.push((row.key.clone(), sums));
            self.dirty.insert(id.clone());
        }
        (!rows.is_empty()).then_some(Batch {
            seq: next_seq,
            rows,
        })
    }

    /// D1 has flush `seq` (applied now or before): its sums are done.
    pub fn flushed(&mut self, seq: u64) {
        for (id, row) in self.rows.iter_mut() {
            if row.in_flight.is_some_and(|f| f.seq == seq) {
                row.in_flight = None;
                self.dirty.insert(id.clone());
            }
        }
    }

    /// Everything goes (a wipe, or a newer generation of the tenant).
    pub fn clear(&mut self) {
        self.rows.clear();
        self.dirty.clear();
    }

    /// The puts and deletes that bring storage in line with memory; empty rows are deleted.
    pub fn take_writes(&mut self) -> StorageWrites {
        let mut w = StorageWrites::default();
        for id in std::mem::take(&mut self.dirty) {
            match self.rows.get(&id) {
                Some(row) if !row.is_empty() => {
                    if let Ok(v) = serde_json::to_string(row) {
                        w.puts.push((id, v));
                    }
                }
                _ => {
                    self.rows.remove(&id);
                    w.deletes.push(id);
                }
            }
        }
        w
    }
}

#[cfg(test)]
#[path = "rollup_store_tests.rs"]
mod tests;
