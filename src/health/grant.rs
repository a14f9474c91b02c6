//! Admission grants (opt-in, `ROUTING_LEASE_MS`): the routing object lets one isolate admit a
//! candidate on its own for a short while, but only while that candidate's breaker is closed with
//! no failure on record and no key of its pool is parked. The isolate drops a grant the moment it
//! reports anything (a failure, a park, a probe), so inside one isolate every rule holds exactly;
//! across isolates, what another isolate has just learned reaches this one within the lease.

use crate::config::{KeyId, KeyStrategy};
use serde::{Deserialize, Serialize};

/// Requests (round-robin positions) one grant may admit before the isolate asks again. The lease
/// bounds a grant in time; this bounds it in requests. At 64, a busy isolate (800 req/s in
/// `make bench`) ran out every 80 ms and 1.6% of its requests paid a round trip, which set its
/// p99; at 512 it asks about twice a second at that rate, and after another isolate's news it
/// can still send no more than one lease's traffic.
pub const GRANT_BLOCK: u64 = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// Epoch ms after which the isolate must ask again.
    pub until: u64,
    /// First round-robin position reserved for this isolate.
    pub cursor: u64,
    /// How many positions were reserved.
    pub block: u64,
}

/// A grant as the isolate holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalGrant {
    grant: Grant,
    used: u64,
}

impl LocalGrant {
    pub fn new(grant: Grant) -> Self {
        Self { grant, used: 0 }
    }

    /// The key order for one more request under this grant, or `None` once it is spent.
    pub fn take(&mut self, keys: &[KeyId], strategy: KeyStrategy, now: u64) -> Option<Vec<KeyId>> {
        if now >= self.grant.until || self.used >= self.grant.block || keys.is_empty() {
            return None;
        }
        let start = match strategy {
            KeyStrategy::Failover => 0,
            // `most_remaining` orders the rotation by headroom afterwards (`Headrooms::order`),
            // so its ties go round-robin.
            KeyStrategy::RoundRobin | KeyStrategy::MostRemaining => {
                ((self.grant.cursor + self.used) % keys.len() as u64) as usize
            }
        };
        self.used += 1;
        Some(
            keys[start..]
                .iter()
                .chain(&keys[..start])
                .cloned()
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<KeyId> {
        vec!["a".into(), "b".into(), "c".into()]
    }

    #[test]
    fn a_grant_rotates_round_robin_from_its_reserved_position() {
        let mut g = LocalGrant::new(Grant {
            until: 100,
            cursor: 1,
            block: 4,
        });
        let firsts: Vec<KeyId> = (0..4)
            .map(|_| g.take(&keys(), KeyStrategy::RoundRobin, 0).unwrap()[0].clone())
            .collect();
        assert_eq!(firsts, ["b", "c", "a", "b"]);
        assert_eq!(
            g.take(&keys(), KeyStrategy::RoundRobin, 0),
            None,
            "the block is spent"
        );
    }

    #[test]
    fn a_grant_lapses_at_its_deadline() {
        let mut g = LocalGrant::new(Grant {
            until: 100,
            cursor: 0,
            block: 64,
        });
        assert!(g.take(&keys(), KeyStrategy::Failover, 99).is_some());
        assert_eq!(g.take(&keys(), KeyStrategy::Failover, 100), None);
    }

    #[test]
    fn failover_always_starts_at_the_first_key() {
        let mut g = LocalGrant::new(Grant {
            until: 100,
            cursor: 7,
            block: 64,
        });
        assert_eq!(g.take(&keys(), KeyStrategy::Failover, 0).unwrap(), keys());
    }
}
