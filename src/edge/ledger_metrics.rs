//! The ledger object's Prometheus counters: every isolate's batches of the tenant
//! are added here, riding on `/settle` (header `METRICS_HEADER`) or in a timed `POST /metrics`,
//! and a scrape reads them with `GET /metrics`. Stored under their own key, unconfirmed
//! (`edge::unconfirmed`): they are advisory, so no settle waits for their disk flush.

use super::events::{fault, Fault};
use super::ledger_object::get_json;
use crate::metrics::counts::MetricCounts;
use std::cell::RefCell;
use worker::{Result, State};

/// The `/settle` request header carrying an isolate's batch (JSON of `MetricCounts`).
pub const METRICS_HEADER: &str = "x-cognigate-metrics";
const METRICS_KEY: &str = "metrics";

/// The counters, loaded from storage on first use.
#[derive(Default)]
pub struct LedgerMetrics {
    counts: RefCell<Option<MetricCounts>>,
}

impl LedgerMetrics {
    async fn ensure_loaded(&self, state: &State) -> Result<()> {
        if self.counts.borrow().is_none() {
            let stored: Option<MetricCounts> = get_json(&state.storage(), METRICS_KEY).await?;
            let mut counts = self.counts.borrow_mut();
            if counts.is_none() {
                *counts = Some(stored.unwrap_or_default());
            }
        }
        Ok(())
    }

    /// Adds a batch and issues its write; `Ok(true)`: added (the isolate may drop it).
    pub async fn add(&self, state: &State, batch: &MetricCounts) -> Result<bool> {
        if batch.is_empty() {
            return Ok(true);
        }
        self.ensure_loaded(state).await?;
        let text = {
            let mut counts = self.counts.borrow_mut();
            let counts = counts.get_or_insert_with(MetricCounts::default);
            counts.merge(batch);
            serde_json::to_string(&*counts)?
        };
        if let Err(e) = super::unconfirmed::put(state, METRICS_KEY, text.into(), "metrics") {
            // Not written: forget memory, so the next use reloads what storage holds; the
            // isolate keeps its batch.
            *self.counts.borrow_mut() = None;
            fault(Fault::MetricsNotStored { error: &e });
            return Ok(false);
        }
        Ok(true)
    }

    pub async fn read(&self, state: &State) -> Result<MetricCounts> {
        self.ensure_loaded(state).await?;
        Ok(self.counts.borrow().clone().unwrap_or_default())
    }

    /// After the ledger's storage was wiped (a deleted tenant).
    pub fn forget(&self) {
        *self.counts.borrow_mut() = None;
    }
}
