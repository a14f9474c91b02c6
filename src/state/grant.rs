//! Admission grants (opt-in, `ROUTING_LEASE_MS`): the routing object lets one isolate admit a
//! candidate on its own for a short while, but only while that candidate's breaker is closed with
//! no failure on record and no key of its pool is parked. The isolate drops a grant the moment it
//! reports anything (a failure, a park, a probe), so inside one isolate every rule holds exactly;
//! across isolates, what another isolate has just learned reaches this one within the lease.

use crate::config::KeyStrategy;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Round-robin positions one grant may use before the isolate asks again.
pub const GRANT_BLOCK: u64 = 64;

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
    pub fn take(
        &mut self,
        keys: &[String],
        strategy: KeyStrategy,
        now: u64,
    ) -> Option<Vec<String>> {
        if now >= self.grant.until || self.used >= self.grant.block || keys.is_empty() {
            return None;
        }
        let start = match strategy {
            KeyStrategy::Failover => 0,
            KeyStrategy::RoundRobin => {
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

/// One isolate's grants for one tenant/provider, with a generation that moves on every report
/// this isolate starts or finishes for that provider. An `/acquire` in flight while such news
/// was sent may carry a grant the routing object issued before it heard the news; its ticket
/// (the generation when it was sent) no longer matches, so that grant is discarded instead of
/// overriding what was just reported. An acquire sent after a report's answer came back is
/// answered after the object applied that report, so its grant is current.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderGrants {
    generation: u64,
    by_model: HashMap<String, LocalGrant>,
}

impl ProviderGrants {
    /// Taken just before an `/acquire` is sent.
    pub fn ticket(&self) -> u64 {
        self.generation
    }

    /// A report for this provider is being sent, or has just been answered: every grant ends.
    pub fn news(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.by_model.clear();
    }

    /// Installs a grant answered to an acquire sent with `ticket`; false if news came in between.
    pub fn install(&mut self, model: &str, grant: Grant, ticket: u64) -> bool {
        if ticket != self.generation {
            return false;
        }
        self.by_model
            .insert(model.to_owned(), LocalGrant::new(grant));
        true
    }

    /// The key order for one more request of `model` under its grant, if one is live.
    pub fn take(
        &mut self,
        model: &str,
        keys: &[String],
        strategy: KeyStrategy,
        now: u64,
    ) -> Option<Vec<String>> {
        let order = self.by_model.get_mut(model)?.take(keys, strategy, now);
        if order.is_none() {
            self.by_model.remove(model);
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<String> {
        vec!["a".into(), "b".into(), "c".into()]
    }

    #[test]
    fn a_grant_rotates_round_robin_from_its_reserved_position() {
        let mut g = LocalGrant::new(Grant {
            until: 100,
            cursor: 1,
            block: 4,
        });
        let firsts: Vec<String> = (0..4)
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

    const G: Grant = Grant {
        until: 1_000,
        cursor: 0,
        block: 64,
    };

    #[test]
    fn a_grant_issued_before_the_isolates_latest_report_is_discarded() {
        let mut book = ProviderGrants::default();
        let ticket = book.ticket(); // the acquire leaves...
        book.news(); // ...a report for the provider is sent meanwhile...
        assert!(!book.install("m", G, ticket), "...so its grant is stale");
        assert_eq!(book.take("m", &keys(), KeyStrategy::Failover, 10), None);
    }

    #[test]
    fn a_grant_answered_while_a_report_was_in_flight_is_discarded_too() {
        let mut book = ProviderGrants::default();
        book.news(); // report sent
        let ticket = book.ticket(); // acquire sent before the report's answer
        book.news(); // report answered
        assert!(!book.install("m", G, ticket));
    }

    #[test]
    fn a_grant_with_no_news_since_its_acquire_is_installed_and_used_until_its_clock_ends() {
        let mut book = ProviderGrants::default();
        let ticket = book.ticket();
        assert!(book.install("m", G, ticket));
        assert!(book
            .take("m", &keys(), KeyStrategy::Failover, 999)
            .is_some());
        assert_eq!(book.take("m", &keys(), KeyStrategy::Failover, 1_000), None);
        assert_eq!(book.take("other", &keys(), KeyStrategy::Failover, 0), None);
    }

    #[test]
    fn news_ends_every_grant_of_the_provider() {
        let mut book = ProviderGrants::default();
        let ticket = book.ticket();
        book.install("m", G, ticket);
        book.install("n", G, ticket);
        book.news();
        assert_eq!(book.take("m", &keys(), KeyStrategy::Failover, 0), None);
        assert_eq!(book.take("n", &keys(), KeyStrategy::Failover, 0), None);
    }
}
