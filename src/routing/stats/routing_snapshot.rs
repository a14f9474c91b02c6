//! A read of one tenant/provider's routing object for `explain`: its state as stored,
//! the admissions of the last minute (memory only, so carried beside it) and its live stats.
//!
//! Reading one changes nothing in the object. The admission it predicts is the object's own
//! `ProviderState::acquire` run on a throwaway copy, so it cannot drift from what a request's
//! acquire would answer at the same instant.

use super::stats_book::StatsSnapshot;
use crate::config::KeyId;
use crate::health::provider_state::{AcquireRequest, Lease, ProviderState};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoutingSnapshot {
    #[serde(default)]
    pub state: ProviderState,
    /// `rpm`: when the admissions of the last minute were made, oldest first.
    #[serde(default)]
    pub admitted: Vec<u64>,
    /// The live stats as the object would answer them now (`None`: none stored yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<StatsSnapshot>,
}

impl RoutingSnapshot {
    pub fn of(state: &ProviderState, stats: Option<StatsSnapshot>) -> Self {
        Self {
            state: state.clone(),
            admitted: state.admitted(),
            stats,
        }
    }

    /// What `acquire` would answer a request at `now`, without a probe claimed, a request
    /// counted or a key rotated anywhere but in a copy.
    pub fn dry_acquire(&self, req: &AcquireRequest, now: u64) -> Lease {
        let mut copy = self.state.clone().with_admitted(self.admitted.clone());
        copy.acquire(req, now)
    }

    /// When every key of `keys` is parked at `now`: the soonest a key is free again. A pool
    /// with a free key (or no key) has none.
    pub fn pool_parked_until(&self, keys: &[KeyId], now: u64) -> Option<u64> {
        let mut soonest: Option<u64> = None;
        for key in keys {
            let until = self.state.parked_until(key.as_str()).filter(|u| *u > now)?;
            soonest = Some(soonest.map_or(until, |s| s.min(until)));
        }
        soonest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BreakerSettings, KeyStrategy, OpenDurations};
    use crate::health::{Gate, Park, ReportRequest, Verdict};

    const S: BreakerSettings = BreakerSettings {
        error_threshold: 1,
        window_ms: 1_000,
        open_duration_ms: 5_000,
        open_durations_ms: OpenDurations::SINGLE,
    };

    fn acquire(rpm: Option<u32>) -> AcquireRequest {
        AcquireRequest {
            model: "m".into(),
            keys: vec!["a".into(), "b".into()],
            strategy: KeyStrategy::Failover,
            probe_timeout_ms: 1_000,
            lease_ms: 0,
            window_ms: S.window_ms,
            rpm,
            leave_probe: false,
        }
    }

    fn report(verdict: Verdict, parks: Vec<Park>) -> ReportRequest {
        ReportRequest {
            model: "m".into(),
            parks,
            verdict,
            probe: None,
            breaker: S,
            scheduled: None,
        }
    }

    #[test]
    fn a_dry_acquire_of_a_half_open_breaker_claims_no_probe() {
        let mut st = ProviderState::default();
        let fail = Verdict::Failure {
            reason: "server".into(),
        };
        st.report(&report(fail, Vec::new()), 0);
        let snap = RoutingSnapshot::of(&st, None);
        let back: RoutingSnapshot =
            serde_json::from_str(&serde_json::to_string(&snap).unwrap()).unwrap();
        assert_eq!(
            back.dry_acquire(&acquire(None), 10).admission,
            Gate::Skip { until: Some(5_000) }
        );
        // Past its end, every dry run would probe, and the object still holds no probe.
        for _ in 0..2 {
            assert!(matches!(
                back.dry_acquire(&acquire(None), 5_000).admission,
                Gate::Probe { .. }
            ));
        }
        assert!(matches!(
            st.acquire(&acquire(None), 5_000).admission,
            Gate::Probe { .. }
        ));
    }

    #[test]
    fn the_admissions_of_the_last_minute_travel_with_the_snapshot() {
        let mut st = ProviderState::default();
        st.acquire(&acquire(Some(1)), 100);
        let snap = RoutingSnapshot::of(&st, None);
        let back: RoutingSnapshot =
            serde_json::from_str(&serde_json::to_string(&snap).unwrap()).unwrap();
        assert_eq!(
            back.dry_acquire(&acquire(Some(1)), 200).admission,
            Gate::Limited { until: 60_100 }
        );
    }

    #[test]
    fn a_pool_is_parked_only_when_every_key_is_until_the_soonest_frees() {
        let mut st = ProviderState::default();
        let park = |k: &str, until| Park {
            key: k.into(),
            until,
        };
        st.report(&report(Verdict::Neutral, vec![park("a", 9_000)]), 0);
        let keys = acquire(None).keys;
        assert_eq!(
            RoutingSnapshot::of(&st, None).pool_parked_until(&keys, 1),
            None
        );
        st.report(&report(Verdict::Neutral, vec![park("b", 7_000)]), 0);
        let snap = RoutingSnapshot::of(&st, None);
        assert_eq!(snap.pool_parked_until(&keys, 1), Some(7_000));
        assert_eq!(snap.pool_parked_until(&keys, 7_000), None);
    }
}
