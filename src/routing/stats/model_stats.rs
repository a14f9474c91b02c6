//! Live stats of one model on one provider: counts, EWMAs of latency and time to first
//! byte, and a success ratio over a recent window.
//!
//! An isolate gathers its outcomes in an `OutcomeBatch`; the routing object folds each batch it
//! is sent into its `ModelStats`, where every isolate's outcomes meet. The isolate's own view is
//! the object's last snapshot with its unsent batch folded in the same way, so a ranking sees its
//! own isolate's news at once and everyone else's within a flush.

use crate::routing::observed::ModelHealth;
use serde::{Deserialize, Serialize};

/// Smoothing: each new sample weighs 0.3.
pub const EWMA_ALPHA: f64 = 0.3;
/// The success ratio counts outcomes of the last `WINDOW_BUCKETS` buckets of this length: five
/// minutes, moving a minute at a time.
pub const WINDOW_BUCKET_MS: u64 = 60_000;
pub const WINDOW_BUCKETS: usize = 5;

/// One upstream attempt's outcome, as the isolate saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample {
    /// Served. A stream knows its total time only at its end (`Finished`).
    Served {
        ttfb_ms: u64,
        latency_ms: Option<u64>,
    },
    /// A streamed answer ended after `latency_ms` in all; it was already counted as served.
    Finished { latency_ms: u64 },
    /// Sent and failed; `counted` when the failure counts toward the breaker.
    Failed { counted: bool },
}

/// One isolate's outcomes of one model since its last fold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeBatch {
    pub requests: u64,
    pub successes: u64,
    pub failures: u64,
    pub latency_sum_ms: u64,
    pub latency_n: u64,
    pub ttfb_sum_ms: u64,
    pub ttfb_n: u64,
}

impl OutcomeBatch {
    pub fn add(&mut self, sample: Sample) {
        match sample {
            Sample::Served {
                ttfb_ms,
                latency_ms,
            } => {
                self.requests += 1;
                self.successes += 1;
                self.ttfb_sum_ms = self.ttfb_sum_ms.saturating_add(ttfb_ms);
                self.ttfb_n += 1;
                if let Some(ms) = latency_ms {
                    self.latency_sum_ms = self.latency_sum_ms.saturating_add(ms);
                    self.latency_n += 1;
                }
            }
            Sample::Finished { latency_ms } => {
                self.latency_sum_ms = self.latency_sum_ms.saturating_add(latency_ms);
                self.latency_n += 1;
            }
            Sample::Failed { counted } => {
                self.requests += 1;
                self.failures += u64::from(counted);
            }
        }
    }

    /// Adds another batch of the same model (a batch whose send failed goes back to pending).
    pub fn merge(&mut self, other: &OutcomeBatch) {
        self.requests = self.requests.saturating_add(other.requests);
        self.successes = self.successes.saturating_add(other.successes);
        self.failures = self.failures.saturating_add(other.failures);
        self.latency_sum_ms = self.latency_sum_ms.saturating_add(other.latency_sum_ms);
        self.latency_n = self.latency_n.saturating_add(other.latency_n);
        self.ttfb_sum_ms = self.ttfb_sum_ms.saturating_add(other.ttfb_sum_ms);
        self.ttfb_n = self.ttfb_n.saturating_add(other.ttfb_n);
    }

    pub fn is_empty(&self) -> bool {
        self.requests == 0 && self.latency_n == 0
    }
}

/// Successes and counted failures that landed in one window bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowBucket {
    /// `now / WINDOW_BUCKET_MS` when the outcomes were folded.
    pub index: u64,
    pub successes: u64,
    pub failures: u64,
}

/// One model's stats where every isolate's batches meet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelStats {
    pub requests: u64,
    pub successes: u64,
    pub failures: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb_ms: Option<f64>,
    /// Newest first, at most `WINDOW_BUCKETS`.
    #[serde(default)]
    pub window: Vec<WindowBucket>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_outcome_ms: Option<u64>,
}

/// A batch of `n` samples with mean `mean` moves an EWMA as `n` samples of `mean` would, so the
/// object's numbers do not depend on how isolates happened to batch them.
fn ewma(current: Option<f64>, sum: u64, n: u64) -> Option<f64> {
    if n == 0 {
        return current;
    }
    let mean = sum as f64 / n as f64;
    Some(match current {
        None => mean,
        Some(old) => {
            let keep = (1.0 - EWMA_ALPHA).powi(i32::try_from(n).unwrap_or(i32::MAX));
            keep * old + (1.0 - keep) * mean
        }
    })
}

impl ModelStats {
    /// Folds a batch as of `now` (its outcomes count in the window bucket of `now`).
    pub fn fold(&mut self, batch: &OutcomeBatch, now: u64) {
        if batch.is_empty() {
            return;
        }
        self.requests = self.requests.saturating_add(batch.requests);
        self.successes = self.successes.saturating_add(batch.successes);
        self.failures = self.failures.saturating_add(batch.failures);
        self.latency_ms = ewma(self.latency_ms, batch.latency_sum_ms, batch.latency_n);
        self.ttfb_ms = ewma(self.ttfb_ms, batch.ttfb_sum_ms, batch.ttfb_n);
        self.last_outcome_ms = Some(self.last_outcome_ms.map_or(now, |t| t.max(now)));
        let index = now / WINDOW_BUCKET_MS;
        self.expire(index);
        match self.window.first_mut() {
            Some(b) if b.index == index => {
                b.successes += batch.successes;
                b.failures += batch.failures;
            }
            _ => self.window.insert(
                0,
                WindowBucket {
                    index,
                    successes: batch.successes,
                    failures: batch.failures,
                },
            ),
        }
        self.window.truncate(WINDOW_BUCKETS);
    }

    /// Drops buckets older than the window ending at bucket `index`.
    fn expire(&mut self, index: u64) {
        let oldest = index.saturating_sub(WINDOW_BUCKETS as u64 - 1);
        self.window
            .retain(|b| b.index >= oldest && b.index <= index);
    }

    /// Successes over successes plus counted failures in the window ending now.
    pub fn success_rate(&self, now: u64) -> Option<f64> {
        let index = now / WINDOW_BUCKET_MS;
        let oldest = index.saturating_sub(WINDOW_BUCKETS as u64 - 1);
        let (ok, failed) = self
            .window
            .iter()
            .filter(|b| b.index >= oldest && b.index <= index)
            .fold((0u64, 0u64), |(s, f), b| (s + b.successes, f + b.failures));
        let total = ok + failed;
        (total > 0).then(|| ok as f64 / total as f64)
    }

    /// The measured part of a model's health; breaker, parks and `rpm` are the caller's to add.
    pub fn health(&self, now: u64) -> ModelHealth {
        ModelHealth {
            requests: self.requests,
            successes: self.successes,
            failures: self.failures,
            success_rate: self.success_rate(now),
            latency_ms: self.latency_ms,
            ttfb_ms: self.ttfb_ms,
            last_outcome_ms: self.last_outcome_ms,
            ..ModelHealth::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(ms: u64) -> Sample {
        Sample::Served {
            ttfb_ms: ms / 2,
            latency_ms: Some(ms),
        }
    }

    #[test]
    fn the_first_sample_sets_the_ewma_and_each_later_one_weighs_0_3() {
        let mut s = ModelStats::default();
        let mut b = OutcomeBatch::default();
        b.add(served(100));
        s.fold(&b, 0);
        assert_eq!(s.latency_ms, Some(100.0));
        let mut b = OutcomeBatch::default();
        b.add(served(200));
        s.fold(&b, 1);
        assert!((s.latency_ms.unwrap() - 130.0).abs() < 1e-9);
    }

    #[test]
    fn a_batch_moves_the_ewma_as_its_samples_would_one_by_one_at_their_mean() {
        let (mut one_by_one, mut batched) = (ModelStats::default(), ModelStats::default());
        let mut all = OutcomeBatch::default();
        for _ in 0..4 {
            let mut b = OutcomeBatch::default();
            b.add(served(50));
            one_by_one.fold(&b, 0);
            all.add(served(50));
        }
        batched.fold(&all, 0);
        assert_eq!(one_by_one.latency_ms, batched.latency_ms);
        assert_eq!(one_by_one.requests, 4);
        assert_eq!(batched.requests, 4);
    }

    #[test]
    fn the_success_ratio_counts_successes_and_counted_failures_of_the_last_five_minutes() {
        let mut s = ModelStats::default();
        let mut b = OutcomeBatch::default();
        b.add(served(10));
        b.add(Sample::Failed { counted: true });
        b.add(Sample::Failed { counted: false });
        s.fold(&b, 0);
        assert_eq!(
            s.success_rate(0),
            Some(0.5),
            "an uncounted failure is left out"
        );
        assert_eq!(s.requests, 3);
        assert_eq!(s.success_rate(4 * WINDOW_BUCKET_MS), Some(0.5));
        assert_eq!(
            s.success_rate(5 * WINDOW_BUCKET_MS),
            None,
            "out of the window"
        );
        let mut b = OutcomeBatch::default();
        b.add(served(10));
        s.fold(&b, 6 * WINDOW_BUCKET_MS);
        assert_eq!(s.success_rate(6 * WINDOW_BUCKET_MS), Some(1.0));
        assert_eq!(s.window.len(), 1, "expired buckets are dropped");
    }

    #[test]
    fn a_stream_counts_as_served_at_its_start_and_adds_its_total_time_at_its_end() {
        let mut b = OutcomeBatch::default();
        b.add(Sample::Served {
            ttfb_ms: 20,
            latency_ms: None,
        });
        b.add(Sample::Finished { latency_ms: 400 });
        let mut s = ModelStats::default();
        s.fold(&b, 0);
        assert_eq!((s.requests, s.successes), (1, 1));
        assert_eq!(s.ttfb_ms, Some(20.0));
        assert_eq!(s.latency_ms, Some(400.0));
    }
}
