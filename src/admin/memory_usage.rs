//! The in-memory store's usage roll-ups and the in-memory ledger's spends, for host tests: the
//! same grouping as the D1 adapter's SQL.

use super::memory::{MemoryRouting, MemoryStore};
use super::store::{LedgerControl, Stored, UsageStore};
use crate::config::period::utc_date;
use crate::config::SortedMap;
use crate::config::TenantId;
use crate::governance::usage_query::{GroupBy, UsageQuery};
use crate::usage::spend::Spend;
use crate::usage::{RollupKey, UsageSums};

impl MemoryStore {
    /// What the ledger's flush writes: rows added to the stored roll-ups.
    pub fn add_rollups(&self, t: &TenantId, rows: &[(RollupKey, UsageSums)]) {
        self.with_data(t, |d| d.rollups.extend_from_slice(rows));
    }
}

impl UsageStore for MemoryStore {
    async fn usage(&self, t: &TenantId, q: &UsageQuery) -> Stored<Vec<(String, UsageSums)>> {
        let rows = self.data(t).map(|d| d.rollups).unwrap_or_default();
        let mut groups: SortedMap<String, UsageSums> = SortedMap::new();
        for (k, s) in rows
            .iter()
            .filter(|(k, _)| k.minute >= q.first_minute() && k.minute < q.to_ms)
        {
            let group = match q.group_by {
                GroupBy::Model => k.model.clone(),
                GroupBy::Provider => k.provider.clone(),
                GroupBy::Key => k.key_id.clone(),
                GroupBy::User => k.end_user.clone(),
                GroupBy::Day => utc_date(k.minute),
            };
            groups.entry(group).or_default().add(s);
        }
        Ok(groups.into_iter().collect())
    }
}

impl LedgerControl for MemoryRouting {
    async fn spend(&self, t: &TenantId, keys: &[String]) -> Stored<SortedMap<String, Spend>> {
        let spends = self.spends.borrow();
        Ok(keys
            .iter()
            .filter_map(|k| Some((k.clone(), *spends.get(&(t.clone(), k.clone()))?)))
            .collect())
    }

    async fn wipe_ledger(&self, t: &TenantId) {
        self.ledgers_wiped.borrow_mut().push(t.clone());
        self.spends.borrow_mut().retain(|(st, _), _| st != t);
    }
}
