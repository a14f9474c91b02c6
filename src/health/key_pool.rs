//! A provider's key pool: Retry-After park windows and the shared round-robin cursor.

use super::MAX_SAFE_MS;
use crate::config::KeyId;
use crate::config::KeyStrategy;
use crate::config::SortedMap;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyPool {
    /// Not persisted: losing it on eviction only restarts the rotation.
    #[serde(skip)]
    cursor: u64,
    /// Key id → epoch ms until which it is parked.
    parked: SortedMap<KeyId, u64>,
}

impl KeyPool {
    /// The keys one request tries, in order. Parked keys are skipped; when every key is parked the
    /// whole pool is tried anyway (soonest-free first), because a window is an estimate, not a fact.
    pub fn plan(&mut self, keys: &[KeyId], strategy: KeyStrategy, now: u64) -> Vec<KeyId> {
        self.parked
            .retain(|k, until| *until > now && keys.contains(k));
        if keys.is_empty() {
            return Vec::new();
        }
        let start = match strategy {
            KeyStrategy::Failover => 0,
            // `most_remaining` orders the rotation by headroom afterwards (`Headrooms::order`),
            // so its ties go round-robin.
            KeyStrategy::RoundRobin | KeyStrategy::MostRemaining => {
                let start = (self.cursor % keys.len() as u64) as usize;
                self.cursor = self.cursor.wrapping_add(1);
                start
            }
        };
        let rotated = keys[start..].iter().chain(&keys[..start]);
        let free: Vec<KeyId> = rotated
            .clone()
            .filter(|k| !self.parked.contains_key(*k))
            .cloned()
            .collect();
        if !free.is_empty() {
            return free;
        }
        let mut all: Vec<KeyId> = rotated.cloned().collect();
        crate::config::sort::sort_by_key(&mut all, |k| self.parked.get(k).copied().unwrap_or(0));
        all
    }

    /// Parks `key` until `until` (the latest report wins); a window already over parks nothing.
    /// `until` is held to a safe integer so the state always stores.
    pub fn park(&mut self, key: &KeyId, until: u64, now: u64) -> bool {
        let until = until.min(MAX_SAFE_MS);
        if until <= now {
            return false;
        }
        self.parked.insert(key.clone(), until) != Some(until)
    }

    /// Whether any key is parked (as of the last `plan`, which forgets lapsed windows).
    pub fn any_parked(&self) -> bool {
        !self.parked.is_empty()
    }

    /// Reserves `n` round-robin positions for one isolate; returns the first.
    pub fn reserve(&mut self, n: u64) -> u64 {
        let start = self.cursor;
        self.cursor = self.cursor.wrapping_add(n);
        start
    }

    /// Keys whose park window is still running at `now`.
    pub fn parked_at(&self, now: u64) -> usize {
        self.parked.values().filter(|until| **until > now).count()
    }

    pub fn parked_until(&self, key: &str) -> Option<u64> {
        self.parked.get(key).copied()
    }

    /// The keys parked at `now`, by id, with when each is free (the console's parked keys).
    pub fn parked_now(&self, now: u64) -> SortedMap<String, u64> {
        self.parked
            .iter()
            .filter(|(_, until)| **until > now)
            .map(|(k, until)| (k.to_string(), *until))
            .collect()
    }

    /// Frees every key at once (`breakers/reset`).
    pub fn unpark_all(&mut self) {
        self.parked.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: usize) -> Vec<KeyId> {
        (1..=n).map(|i| KeyId::new(format!("k{i}"))).collect()
    }

    #[test]
    fn round_robin_starts_each_request_one_key_further() {
        let mut pool = KeyPool::default();
        let k = keys(3);
        let firsts: Vec<KeyId> = (0..6)
            .map(|_| pool.plan(&k, KeyStrategy::RoundRobin, 0)[0].clone())
            .collect();
        assert_eq!(firsts, ["k1", "k2", "k3", "k1", "k2", "k3"]);
    }

    #[test]
    fn whichever_the_start_the_whole_pool_is_planned() {
        let mut pool = KeyPool::default();
        let k = keys(3);
        pool.plan(&k, KeyStrategy::RoundRobin, 0);
        assert_eq!(
            pool.plan(&k, KeyStrategy::RoundRobin, 0),
            ["k2", "k3", "k1"]
        );
    }

    #[test]
    fn failover_always_starts_at_the_first_key() {
        let mut pool = KeyPool::default();
        let k = keys(3);
        for _ in 0..3 {
            assert_eq!(pool.plan(&k, KeyStrategy::Failover, 0), ["k1", "k2", "k3"]);
        }
    }

    #[test]
    fn parked_key_is_skipped_until_its_window_ends_exactly() {
        let mut pool = KeyPool::default();
        let k = keys(2);
        pool.park(&"k1".into(), 5_000, 0);
        assert_eq!(pool.plan(&k, KeyStrategy::Failover, 4_999), ["k2"]);
        assert_eq!(pool.plan(&k, KeyStrategy::Failover, 5_000), ["k1", "k2"]);
    }

    #[test]
    fn when_every_key_is_parked_the_whole_pool_is_tried_anyway() {
        let mut pool = KeyPool::default();
        let k = keys(3);
        pool.park(&"k1".into(), 9_000, 0);
        pool.park(&"k2".into(), 3_000, 0);
        pool.park(&"k3".into(), 6_000, 0);
        assert_eq!(pool.plan(&k, KeyStrategy::Failover, 1), ["k2", "k3", "k1"]);
    }

    #[test]
    fn window_already_over_parks_nothing() {
        let mut pool = KeyPool::default();
        assert!(!pool.park(&"k1".into(), 100, 100));
        assert_eq!(pool.parked_until("k1"), None);
    }

    #[test]
    fn latest_report_sets_the_window() {
        let mut pool = KeyPool::default();
        pool.park(&"k1".into(), 9_000, 0);
        pool.park(&"k1".into(), 2_000, 1_000);
        assert_eq!(pool.parked_until("k1"), Some(2_000));
    }

    #[test]
    fn a_park_window_past_the_safe_integer_range_is_stored_at_its_edge() {
        let mut pool = KeyPool::default();
        pool.park(&"k1".into(), u64::MAX, 0);
        assert_eq!(pool.parked_until("k1"), Some(MAX_SAFE_MS));
        let json = serde_json::to_value(&pool).unwrap();
        assert_eq!(json["parked"]["k1"].as_u64(), Some(MAX_SAFE_MS));
    }

    #[test]
    fn unpark_all_frees_every_key_at_once() {
        let mut pool = KeyPool::default();
        pool.park(&"k1".into(), 9_000, 0);
        pool.park(&"k2".into(), 9_000, 0);
        pool.unpark_all();
        assert_eq!(pool.plan(&keys(2), KeyStrategy::Failover, 1), ["k1", "k2"]);
        assert!(!pool.any_parked());
    }

    #[test]
    fn parks_of_keys_no_longer_in_the_pool_are_forgotten() {
        let mut pool = KeyPool::default();
        pool.park(&"gone".into(), 9_000, 0);
        pool.plan(&keys(1), KeyStrategy::Failover, 1);
        assert_eq!(pool.parked_until("gone"), None);
    }
}
