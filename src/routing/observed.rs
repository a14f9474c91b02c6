//! What the gateway has measured of each model, as the ranking reads it.
//!
//! The ranking never asks how the numbers were gathered: the edge answers from this isolate's
//! view (the routing objects' last snapshots plus its own outcomes not yet folded into them),
//! and host tests answer from a table.

use crate::config::{ModelId, ProviderName};

/// One model on one provider, as measured. `None` fields have no sample yet: a model without a
/// value on an axis ranks as if it had the best one there, so it gets tried.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ModelHealth {
    /// Upstream attempts made (every isolate, since the stats began).
    pub requests: u64,
    pub successes: u64,
    /// Failures that count toward the breaker (`Failure::counts_toward_breaker`).
    pub failures: u64,
    /// Successes over successes plus counted failures, in the recent window; `None` without
    /// an outcome in it.
    pub success_rate: Option<f64>,
    /// EWMA (alpha 0.3) of a served answer's total time, request sent to last byte.
    pub latency_ms: Option<f64>,
    /// EWMA (alpha 0.3) of a served answer's time to response headers.
    pub ttfb_ms: Option<f64>,
    /// Epoch ms of the newest outcome in these stats; `None` if there is none.
    pub last_outcome_ms: Option<u64>,
    /// The breaker is open and a request would be skipped now.
    pub breaker_open: bool,
    /// Share of the provider's keys parked now (0 to 1): a live rate-limit penalty.
    pub parked_share: f64,
    /// Share of the provider's `rpm` used in the current minute (0 to 1; 0 without `rpm`).
    pub rpm_share: f64,
    /// The headroom of the provider's best key with a live figure (`None`: no key has one).
    pub headroom: Option<f64>,
    /// Share of served prompt tokens read from the provider's prompt cache in the recent window
    /// (cache reads ÷ prompt tokens); `None` until measured.
    pub cached_share: Option<f64>,
}

impl ModelHealth {
    /// `known` with the breaker taken as open while this isolate's grant book skips the model.
    pub fn with_skipping(known: Option<Self>, skipping: bool) -> Option<Self> {
        match (known, skipping) {
            (None, false) => None,
            (h, skipping) => {
                let h = h.unwrap_or_default();
                Some(Self {
                    breaker_open: h.breaker_open || skipping,
                    ..h
                })
            }
        }
    }
}

/// Where the ranking reads what was measured.
pub trait Observed {
    /// `None`: nothing is known of this model (no stats, breaker not known to be open).
    fn health(&self, provider: &ProviderName, model: &ModelId) -> Option<ModelHealth>;
}

/// Nothing measured: every model ranks as untried (the spec's resolution never asks).
pub struct NothingObserved;

impl Observed for NothingObserved {
    fn health(&self, _: &ProviderName, _: &ModelId) -> Option<ModelHealth> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::ModelHealth;

    #[test]
    fn a_model_the_grant_book_skips_reads_as_breaker_open() {
        assert_eq!(ModelHealth::with_skipping(None, false), None);
        let skipped = ModelHealth::with_skipping(None, true).unwrap();
        assert!(skipped.breaker_open);
        let known = ModelHealth {
            requests: 3,
            ..ModelHealth::default()
        };
        let seen = ModelHealth::with_skipping(Some(known), true).unwrap();
        assert!(seen.breaker_open);
        assert_eq!(seen.requests, 3);
        assert_eq!(ModelHealth::with_skipping(Some(known), false), Some(known));
    }
}
