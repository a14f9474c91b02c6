//! The per-isolate memo of what the request path reads from D1 (caller keys, tenant configs),
//! as a pure type with time passed in.
//!
//! The rules (issue: revocation that really ends):
//! - An entry older than the TTL never answers: past it the caller must load again. An entry's
//!   age counts from when the read that produced it *began*, so a slow read cannot stretch it.
//! - From half the TTL on, a hit also hands out one refresh ticket, so a key in steady use is
//!   reloaded in the background before it expires and warm requests do not wait on D1.
//! - A refresh that fails frees the ticket and leaves the entry's age as it was.
//! - A read that began before an invalidation never writes its result back (a generation
//!   counter), and a read never overwrites a newer one.
//! - Absent keys are remembered for a short negative TTL in a bounded table, so a client
//!   retrying with a wrong key does not cost a D1 query per request.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoPolicy {
    pub ttl_ms: u64,
    /// 0 turns negative caching off.
    pub negative_ttl_ms: u64,
    /// Present entries held at most; past it the oldest is dropped.
    pub max_entries: usize,
    /// Absent keys remembered at most; past it the oldest is forgotten.
    pub max_absent: usize,
}

/// Proof that a read began at `started_at` under `generation`; needed to store its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    generation: u64,
    started_at: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<V> {
    Hit(V),
    /// A hit past half its TTL: serve it, and reload it in the background with this ticket.
    HitRefresh(V, Ticket),
    /// Known not to exist, within the negative TTL.
    Absent,
    /// Nothing usable: load it (with this ticket) before answering.
    Miss(Ticket),
}

struct Entry<V> {
    value: V,
    loaded_at: u64,
    refreshing_since: Option<u64>,
}

pub struct Memo<K, V> {
    policy: MemoPolicy,
    entries: HashMap<K, Entry<V>>,
    absent: HashMap<K, u64>,
    absent_order: VecDeque<K>,
    generation: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> Memo<K, V> {
    pub fn new(policy: MemoPolicy) -> Self {
        Self {
            policy,
            entries: HashMap::new(),
            absent: HashMap::new(),
            absent_order: VecDeque::new(),
            generation: 0,
        }
    }

    /// The TTL may come from deployment vars read after the cache was created.
    pub fn set_policy(&mut self, policy: MemoPolicy) {
        self.policy = policy;
    }

    fn ticket(&self, now: u64) -> Ticket {
        Ticket {
            generation: self.generation,
            started_at: now,
        }
    }

    /// Whatever is held for `key`, however old, without starting a load: for a caller that only
    /// wants a hint (whether a tenant has alerts at all) and never a query.
    pub fn peek(&self, key: &K) -> Option<V> {
        self.entries.get(key).map(|e| e.value.clone())
    }

    pub fn lookup(&mut self, key: &K, now: u64) -> Lookup<V> {
        let ttl = self.policy.ttl_ms;
        let ticket = self.ticket(now);
        if let Some(e) = self.entries.get_mut(key) {
            let age = now.saturating_sub(e.loaded_at);
            if age < ttl {
                let half = ttl / 2;
                let refresh_free = e
                    .refreshing_since
                    .is_none_or(|since| now.saturating_sub(since) >= half);
                if age >= half && refresh_free {
                    e.refreshing_since = Some(now);
                    return Lookup::HitRefresh(e.value.clone(), ticket);
                }
                return Lookup::Hit(e.value.clone());
            }
            self.entries.remove(key);
        }
        match self.absent.get(key) {
            Some(&at) if now.saturating_sub(at) < self.policy.negative_ttl_ms => Lookup::Absent,
            Some(_) => {
                self.absent.remove(key);
                Lookup::Miss(ticket)
            }
            None => Lookup::Miss(ticket),
        }
    }

    /// Stores what a read found (`None`: the key does not exist). Returns whether it was kept:
    /// a read from before an invalidation, or older than what is held, is dropped.
    pub fn store(&mut self, key: K, value: Option<V>, ticket: Ticket) -> bool {
        if ticket.generation != self.generation {
            return false;
        }
        let newer_held = self
            .entries
            .get(&key)
            .is_some_and(|e| e.loaded_at > ticket.started_at)
            || self
                .absent
                .get(&key)
                .is_some_and(|&at| at > ticket.started_at);
        if newer_held {
            return false;
        }
        match value {
            Some(value) => {
                self.absent.remove(&key);
                if !self.entries.contains_key(&key) && self.entries.len() >= self.policy.max_entries
                {
                    self.drop_oldest_entry();
                }
                self.entries.insert(
                    key,
                    Entry {
                        value,
                        loaded_at: ticket.started_at,
                        refreshing_since: None,
                    },
                );
            }
            None => {
                self.entries.remove(&key);
                self.remember_absent(key, ticket.started_at);
            }
        }
        true
    }

    /// A background refresh failed: another may start, and the entry still expires on time.
    pub fn refresh_failed(&mut self, key: &K) {
        if let Some(e) = self.entries.get_mut(key) {
            e.refreshing_since = None;
        }
    }

    /// Drops every entry `stale` picks and every absent key (a write may have created one), and
    /// voids every read still in flight.
    pub fn invalidate(&mut self, stale: impl Fn(&K, &V) -> bool) {
        self.generation += 1;
        self.entries.retain(|k, e| !stale(k, &e.value));
        self.absent.clear();
        self.absent_order.clear();
    }

    fn remember_absent(&mut self, key: K, at: u64) {
        if self.policy.negative_ttl_ms == 0 || self.policy.max_absent == 0 {
            return;
        }
        if self.absent.insert(key.clone(), at).is_none() {
            self.absent_order.push_back(key);
        }
        while self.absent.len() > self.policy.max_absent {
            match self.absent_order.pop_front() {
                Some(old) => {
                    self.absent.remove(&old);
                }
                None => break,
            }
        }
        // The order queue may hold keys already forgotten; keep it from outgrowing the table.
        if self.absent_order.len() > 2 * self.policy.max_absent {
            let absent = &self.absent;
            self.absent_order.retain(|k| absent.contains_key(k));
        }
    }

    fn drop_oldest_entry(&mut self) {
        let oldest = self
            .entries
            .iter()
            .min_by_key(|(_, e)| e.loaded_at)
            .map(|(k, _)| k.clone());
        if let Some(k) = oldest {
            self.entries.remove(&k);
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn absent_len(&self) -> usize {
        self.absent.len()
    }
}

#[cfg(test)]
#[path = "memo_tests.rs"]
mod tests;
