//! Records an isolate could not hand to its ledger (a failed `settle`), kept and sent again with
//! the next call; never dropped. Past `MAX_RETAINED` records, those of one roll-up row (minute,
//! model, provider, key, end user), one outcome and one tenant generation are folded into one
//! record that carries their summed tokens, cost and savings and how many requests it stands for, so money
//! and the usage API's counts lose nothing; only the per-request ids of folded records are given
//! up.

use super::ask::SettleEntry;
use crate::config::SortedMap;
use crate::usage::RollupKey;

pub const MAX_RETAINED: usize = 1_024;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retained {
    entries: Vec<SettleEntry>,
}

/// The roll-up row, then what else must match for records to fold: outcome, usage source and
/// generation, whether the end user is tracked, and the hold they settle.
type FoldKey = (RollupKey, String, bool, String);

fn fold_key(e: &SettleEntry) -> FoldKey {
    let r = &e.record;
    (
        RollupKey::of(r),
        format!(
            "{:?}/{:?}/{}/{}",
            r.outcome, r.usage_source, r.generation, r.cache_hit
        ),
        e.track_end_user,
        e.hold.as_ref().map(|h| h.id.clone()).unwrap_or_default(),
    )
}

fn fold(into: &mut SettleEntry, e: SettleEntry) {
    let (r, o) = (&mut into.record, e.record);
    r.tokens = match (r.tokens, o.tokens) {
        (Some(a), Some(b)) => Some(a.zip(b, u64::saturating_add)),
        (a, b) => a.or(b),
    };
    let sum = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
    r.cost_usd = sum(r.cost_usd, o.cost_usd);
    r.saved_usd = sum(r.saved_usd, o.saved_usd);
    r.cache_savings_usd = sum(r.cache_savings_usd, o.cache_savings_usd);
    r.at_ms = r.at_ms.min(o.at_ms);
    if !r.request_id.starts_with("folded:") {
        r.request_id = format!("folded:{}", r.request_id);
    }
    into.merged = into.merged.saturating_add(e.merged).saturating_add(1);
    if let (Some(h), Some(o)) = (into.hold.as_mut(), e.hold.as_ref()) {
        h.absorb(o);
    }
}

impl Retained {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Everything kept, to be sent (first) with the next call.
    pub fn take(&mut self) -> Vec<SettleEntry> {
        std::mem::take(&mut self.entries)
    }

    /// Keeps records that were not handed over; folds them once there are too many.
    pub fn keep(&mut self, batch: Vec<SettleEntry>) {
        self.entries.extend(batch);
        if self.entries.len() <= MAX_RETAINED {
            return;
        }
        let mut rows: SortedMap<FoldKey, SettleEntry> = SortedMap::new();
        for e in std::mem::take(&mut self.entries) {
            let key = fold_key(&e);
            match rows.get_mut(&key) {
                Some(row) => fold(row, e),
                None => {
                    rows.insert(key, e);
                }
            }
        }
        self.entries = rows.into_values().collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::{TokenCounts, UsageRecord};

    fn entry(id: &str, savings: Option<f64>) -> SettleEntry {
        let record: UsageRecord = serde_json::from_value(serde_json::json!({
            "at_ms": 1, "request_id": id, "tenant": "t", "key_id": "k", "end_user": null,
            "requested": "m", "served_model": "m", "provider": "p",
            "tokens": TokenCounts::new(100, 1, 50).with_writes(10, 20), "cost_usd": 0.5,
            "outcome": "served", "cache_savings_usd": savings}))
        .unwrap();
        SettleEntry::new(record, false, None)
    }

    #[test]
    fn folded_records_keep_their_summed_cache_writes_and_savings() {
        let mut kept = Retained::default();
        let batch = (0..=MAX_RETAINED)
            .map(|i| entry(&format!("r{i}"), (i % 2 == 0).then_some(-0.001)))
            .collect();
        kept.keep(batch);
        let folded = kept.take();
        assert_eq!(folded.len(), 1);
        let r = &folded[0].record;
        let n = MAX_RETAINED as u64 + 1;
        assert_eq!(
            r.tokens.map(|t| (t.cache_write, t.cache_write_1h)),
            Some((10 * n, 20 * n))
        );
        let with_savings = n.div_ceil(2);
        let want = -0.001 * with_savings as f64;
        assert!((r.cache_savings_usd.unwrap() - want).abs() < 1e-9, "{r:?}");
    }
}
