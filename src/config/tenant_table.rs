//! One isolate's table of many tenants' entries (what it remembers per conversation, per alert
//! scope), bounded in all, in which no tenant can push out another's.
//!
//! The rule: a full table makes room by dropping the least recently used entry of the tenant that
//! holds the most entries (of tenants holding as many, the one whose least recent entry is the
//! oldest). So a tenant never loses an entry to a tenant holding fewer than it does after the
//! write, and one that fills the table only cycles through its own entries. Memory stays bounded:
//! at most `capacity` entries in all, and a tenant is tracked only while it holds one.

use super::SortedMap;
use std::borrow::Borrow;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::hash::Hash;

/// One tenant's entries and their use order.
#[derive(Debug)]
struct Holding<K, V> {
    entries: HashMap<K, (V, u64)>,
    /// Use order → key: the first is the least recently used.
    by_age: SortedMap<u64, K>,
}

impl<K, V> Holding<K, V> {
    /// Where this tenant stands for eviction: the most entries first, then the oldest.
    fn rank(&self) -> (usize, Reverse<u64>) {
        let oldest = self.by_age.first_key_value().map_or(u64::MAX, |(o, _)| *o);
        (self.entries.len(), Reverse(oldest))
    }
}

#[derive(Debug)]
pub struct TenantTable<K, V> {
    capacity: usize,
    tenants: SortedMap<String, Holding<K, V>>,
    len: usize,
    /// The next use order (one counter for every tenant, so ages compare across tenants).
    next: u64,
}

impl<K: Hash + Eq + Clone, V> TenantTable<K, V> {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            tenants: SortedMap::new(),
            len: 0,
            next: 0,
        }
    }

    pub fn get<Q>(&self, tenant: &str, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let holding = self.tenants.get(tenant)?;
        holding.entries.get(key).map(|(v, _)| v)
    }

    /// Entries in all.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries `tenant` holds.
    pub fn len_of(&self, tenant: &str) -> usize {
        self.tenants.get(tenant).map_or(0, |h| h.entries.len())
    }

    /// Whether a new entry of `tenant` could only be made room for with one of its own: the table
    /// is full and, with one more, `tenant` would hold the most.
    pub fn full_for(&self, tenant: &str) -> bool {
        if self.len < self.capacity {
            return false;
        }
        let own = self.tenants.get(tenant);
        let oldest = own
            .and_then(|h| h.by_age.first_key_value())
            .map_or(self.next, |(o, _)| *o);
        let rank = (own.map_or(0, |h| h.entries.len()) + 1, Reverse(oldest));
        self.tenants
            .iter()
            .filter(|(t, _)| t.as_str() != tenant)
            .all(|(_, h)| h.rank() < rank)
    }

    /// `key` of `tenant` now holds `value`, as its most recently used entry; a full table then
    /// drops one entry by the rule above.
    pub fn put(&mut self, tenant: &str, key: K, value: V) {
        let order = self.next;
        self.next += 1;
        let holding = self
            .tenants
            .entry(tenant.to_owned())
            .or_insert_with(|| Holding {
                entries: HashMap::new(),
                by_age: SortedMap::new(),
            });
        holding.by_age.insert(order, key.clone());
        match holding.entries.insert(key, (value, order)) {
            Some((_, old)) => {
                holding.by_age.remove(&old);
            }
            None => self.len += 1,
        }
        while self.len > self.capacity && self.evict_one() {}
    }

    /// Drops the least recently used entry of the tenant that holds the most.
    fn evict_one(&mut self) -> bool {
        let Some(tenant) = self
            .tenants
            .iter()
            .max_by_key(|(_, h)| h.rank())
            .map(|(t, _)| t.clone())
        else {
            return false;
        };
        let Some(holding) = self.tenants.get_mut(&tenant) else {
            return false;
        };
        let Some((_, key)) = holding.by_age.pop_first() else {
            return false;
        };
        holding.entries.remove(&key);
        self.len -= 1;
        if holding.entries.is_empty() {
            self.tenants.remove(&tenant);
        }
        true
    }

    /// Keeps only the entries whose value `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        let mut len = 0;
        self.tenants.retain(|_, h| {
            h.entries.retain(|_, (v, _)| keep(v));
            let entries = &h.entries;
            h.by_age.retain(|_, k| entries.contains_key(k));
            len += entries.len();
            !entries.is_empty()
        });
        self.len = len;
    }
}

#[cfg(test)]
#[path = "tenant_table_tests.rs"]
mod tests;
