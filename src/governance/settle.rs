//! What a finished request adds to its scopes: its reservation is replaced by its actual charge,
//! once per request id (`settled`).

use super::admission::{Ledger, ScopeId, SettleEntry};
use super::settled::Seen;
use crate::usage::rollup_store::StorageWrites;
use crate::usage::{TokenCounts, UsageRecord};

/// What the roll-ups get from one settled entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Rollup {
    /// The record, counting this many requests.
    Record(u64),
    /// A late report's difference, counting no request (its request was counted already).
    Difference(Box<UsageRecord>),
    /// Nothing: the entry was settled before.
    Nothing,
}

/// What settling one entry changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// Scopes whose spend changed (to be stored).
    pub changed: Vec<ScopeId>,
    pub rollup: Rollup,
}

impl Ledger {
    /// The scopes a finished request settles into; those not loaded must be loaded first.
    pub fn scopes_of(entry: &SettleEntry) -> Vec<ScopeId> {
        let mut s = vec![ScopeId::Tenant, ScopeId::Key(entry.record.key_id.clone())];
        if let Some(u) = entry
            .record
            .end_user
            .as_ref()
            .filter(|_| entry.track_end_user)
        {
            s.push(ScopeId::EndUser(u.clone()));
        }
        s
    }

    /// The settled ids were read back from storage since this ledger started (`settled`).
    pub fn settled_loaded(&self) -> bool {
        self.settled.is_loaded()
    }

    /// Reads back the stored settled ids (`settled::SETTLED_PREFIX` keys), before the first
    /// settle of a ledger that started again.
    pub fn load_settled(&mut self, stored: impl IntoIterator<Item = (String, String)>, now: u64) {
        self.settled.load(stored, now);
    }

    /// The settled ids to store and forget, in the same write as the spend they go with.
    pub fn take_settled_writes(&mut self) -> StorageWrites {
        self.settled.take_writes()
    }

    /// Settles a finished request: the first record of a request releases its hold and adds
    /// its tokens (toward `tpm`, now that they are known) and cost; a request admitted from a
    /// slice counts toward `rpm` now. A later record of the same request adds only what a late
    /// report raised; a repeated one adds nothing.
    pub fn settle(&mut self, entry: &SettleEntry, now_ms: u64) -> Settled {
        self.expire_holds(now_ms);
        let record = &entry.record;
        let (tokens, cost, rollup) = match self.settled.check(record, now_ms) {
            Seen::New => (
                record.tokens.unwrap_or_default(),
                record.cost_usd.unwrap_or(0.0),
                Rollup::Record(entry.merged.saturating_add(1)),
            ),
            Seen::Duplicate => {
                return Settled {
                    changed: Vec::new(),
                    rollup: Rollup::Nothing,
                }
            }
            Seen::Difference(tokens, usd) => (
                tokens,
                usd,
                Rollup::Difference(Box::new(UsageRecord {
                    tokens: Some(tokens),
                    cost_usd: Some(usd),
                    cache_savings_usd: late_savings(record, &tokens),
                    ..record.clone()
                })),
            ),
        };
        let first = matches!(rollup, Rollup::Record(_));
        let mut changed = Vec::new();
        for id in Self::scopes_of(entry) {
            let scope = self.scopes.entry(id.clone()).or_default();
            if let (true, Some(hold)) = (first, &entry.hold) {
                scope.holds.release(hold);
                if hold.requests > 0 && !matches!(id, ScopeId::Tenant) {
                    scope.requests.add(now_ms, hold.requests);
                }
            }
            scope.tokens.add(now_ms, TokenCounts::total(&tokens));
            let before = scope.spend;
            scope.spend.add(now_ms, cost);
            if scope.spend != before {
                changed.push(id);
            }
        }
        Settled { changed, rollup }
    }
}

/// The cache savings a late report's difference adds. The estimate settled first carried the
/// savings of the cache tokens it knew (a Messages stream's `message_start` reports them): a
/// difference whose cache tokens are all new adds the report's savings, one that shares any
/// adds none, so no read or write is counted as saving twice.
fn late_savings(record: &UsageRecord, delta: &TokenCounts) -> Option<f64> {
    let reported = record.tokens.unwrap_or_default();
    let cache = |t: &TokenCounts| (t.cached, t.cache_write, t.cache_write_1h);
    (cache(delta) == cache(&reported))
        .then_some(record.cache_savings_usd)
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_report_adds_savings_only_for_cache_tokens_its_estimate_did_not_have() {
        let tokens = TokenCounts::new(1_310, 4, 1_000).with_writes(100, 200);
        let record: UsageRecord = serde_json::from_value(serde_json::json!({
            "at_ms": 1, "tenant": "t", "key_id": "k", "end_user": null, "requested": "m",
            "served_model": "m", "provider": "p", "tokens": tokens, "cost_usd": 0.1,
            "outcome": "served", "cache_savings_usd": 0.002}))
        .unwrap();
        // The estimate knew nothing of the cache: the whole report's savings are new.
        assert_eq!(late_savings(&record, &tokens), Some(0.002));
        // The estimate had the cache tokens (from message_start): their savings were counted.
        let output_only = TokenCounts::new(0, 3, 0);
        assert_eq!(late_savings(&record, &output_only), None);
    }
}
