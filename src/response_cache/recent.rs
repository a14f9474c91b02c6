//! The isolate's own copies of the entries it stored or read last, in front of the store: a hit
//! on one of them reads nothing from the Cache API or KV.
//!
//! - The same key, so the same scope: a copy answers exactly the requests its entry answers.
//! - Bounded by bytes: past the bound, the least recently used copies go first. An answer larger
//!   than `MAX_COPY_BYTES` is not copied (the store still holds it).
//! - The entry's own expiry still decides: the lookup judges a copy's freshness as it judges
//!   the store's, and a stale copy is dropped when it is next asked for.
//! - The store stays the record: every entry is written to it as before, and a copy that is
//!   dropped is read from it again.

use super::stored::StoredMeta;
use std::collections::HashMap;
use std::rc::Rc;

/// Bytes of answers the isolate keeps copies of, at most.
pub const CAPACITY_BYTES: usize = 8 << 20;
/// A larger answer is not copied: a few such would push out many common ones.
pub const MAX_COPY_BYTES: usize = 256 << 10;

struct Kept {
    meta: StoredMeta,
    body: Rc<[u8]>,
    /// When it was last used, in this table's own count of uses.
    used: u64,
}

pub struct RecentEntries {
    capacity: usize,
    bytes: usize,
    uses: u64,
    copies: HashMap<String, Kept>,
}

impl Default for RecentEntries {
    fn default() -> Self {
        Self::with_capacity(CAPACITY_BYTES)
    }
}

impl RecentEntries {
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            capacity,
            bytes: 0,
            uses: 0,
            copies: HashMap::new(),
        }
    }

    /// The copy under `key` while it is fresh at `now_ms`; a stale one is dropped.
    pub fn get(&mut self, key: &str, now_ms: u64) -> Option<(StoredMeta, Rc<[u8]>)> {
        let fresh = self.copies.get(key)?.meta.fresh(now_ms);
        if !fresh {
            self.remove(key);
            return None;
        }
        self.uses += 1;
        let copy = self.copies.get_mut(key)?;
        copy.used = self.uses;
        Some((copy.meta.clone(), copy.body.clone()))
    }

    /// Keeps a copy of an entry just stored or read from the store, replacing an older one.
    pub fn put(&mut self, key: &str, meta: StoredMeta, body: Rc<[u8]>) {
        self.remove(key);
        if body.len() > MAX_COPY_BYTES || body.len() > self.capacity {
            return;
        }
        // Evictions come only with a miss's store, beside which a scan of the copies is small.
        while self.bytes + body.len() > self.capacity {
            let oldest = self.copies.iter().min_by_key(|(_, c)| c.used);
            let Some(oldest) = oldest.map(|(k, _)| k.clone()) else {
                break;
            };
            self.remove(&oldest);
        }
        self.uses += 1;
        self.bytes += body.len();
        let used = self.uses;
        self.copies
            .insert(key.to_owned(), Kept { meta, body, used });
    }

    fn remove(&mut self, key: &str) {
        if let Some(gone) = self.copies.remove(key) {
            self.bytes -= gone.body.len();
        }
    }

    /// Bytes of answers held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.copies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.copies.is_empty()
    }
}

#[cfg(test)]
#[path = "recent_tests.rs"]
mod tests;
