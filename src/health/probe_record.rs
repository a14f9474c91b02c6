//! What the scheduled probes of one provider found: the verdict of the last one (of any of its
//! models), when it was sent and how long it took, and how many failed in a row. Only the
//! scheduled pass's probes count: a user request that happens to probe a half-open breaker is
//! traffic, not a health check, and its outcome is already the breaker's.

use serde::{Deserialize, Serialize};

/// A scheduled probe's timing, stamped on its report by the pass that sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledProbe {
    /// When the probe was sent (epoch ms, the pass's clock).
    pub at: u64,
    /// How long it took, to its report.
    pub ms: u64,
}

/// The provider's probe record, kept by its routing object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// Whether the last probe was answered without a failure that counts toward its breaker.
    pub reachable: bool,
    pub last_probe_at: u64,
    pub last_probe_ms: u64,
    /// Probes that failed, in a row, up to the last; an answered probe clears it.
    pub consecutive_failures: u32,
}

impl ProbeRecord {
    /// The record after `probe` ended, answered or failed. Reports can arrive out of order across
    /// the object's callers: one of a probe sent before the last recorded one changes nothing.
    pub fn after(previous: Option<Self>, probe: ScheduledProbe, answered: bool) -> Self {
        if let Some(p) = previous.filter(|p| p.last_probe_at > probe.at) {
            return p;
        }
        let failures = previous.map_or(0, |p| p.consecutive_failures);
        Self {
            reachable: answered,
            last_probe_at: probe.at,
            last_probe_ms: probe.ms,
            consecutive_failures: if answered {
                0
            } else {
                failures.saturating_add(1)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(at: u64, ms: u64) -> ScheduledProbe {
        ScheduledProbe { at, ms }
    }

    #[test]
    fn failed_probes_count_in_a_row_and_a_served_probe_clears_the_count() {
        let one = ProbeRecord::after(None, probe(1_000, 40), false);
        assert_eq!(one.consecutive_failures, 1);
        assert!(!one.reachable);
        let two = ProbeRecord::after(Some(one), probe(2_000, 50), false);
        assert_eq!(two.consecutive_failures, 2);
        assert_eq!((two.last_probe_at, two.last_probe_ms), (2_000, 50));
        let served = ProbeRecord::after(Some(two), probe(3_000, 30), true);
        assert_eq!(
            served,
            ProbeRecord {
                reachable: true,
                last_probe_at: 3_000,
                last_probe_ms: 30,
                consecutive_failures: 0
            }
        );
    }

    #[test]
    fn a_report_of_a_probe_older_than_the_last_recorded_changes_nothing() {
        let last = ProbeRecord::after(None, probe(5_000, 10), true);
        assert_eq!(
            ProbeRecord::after(Some(last), probe(4_000, 10), false),
            last
        );
    }
}
