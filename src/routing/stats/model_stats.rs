//! Live stats of one model on one provider: counts, EWMAs of latency and time to first
//! byte, and a success ratio over a recent window.
//!
//! An isolate gathers its outcomes in an `OutcomeBatch`; the routing object folds each batch it
//! is sent into its `ModelStats`, where every isolate's outcomes meet. The isolate's own view is
//! the object's last snapshot with its unsent batch folded in the same way, so a ranking sees its
//! own isolate's news at once and everyone else's within a flush.
//!
//! Served answers' prompt tokens and the part of them read from the provider's prompt cache are
//! summed per window bucket too: their ratio over the window (`cached_share`) prices a model's
//! input as measured in the cost order (`CatalogModel::effective_price`).

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
    /// A served answer's reported usage: its prompt tokens, and how many of them were read from
    /// the provider's prompt cache. Known once the usage is (a stream's at its end); the answer
    /// was already counted as served.
    Tokens { prompt: u64, cached: u64 },
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
    /// Prompt tokens of served answers, and those read from the prompt cache (absent from an
    /// older isolate's batch).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prompt_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
            Sample::Tokens { prompt, cached } => {
                self.prompt_tokens = self.prompt_tokens.saturating_add(prompt);
                self.cached_tokens = self.cached_tokens.saturating_add(cached.min(prompt));
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
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
    }

    pub fn is_empty(&self) -> bool {
        self.requests == 0 && self.latency_n == 0 && self.prompt_tokens == 0
    }
}

/// Successes and counted failures that landed in one window bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowBucket {
    /// `now / WINDOW_BUCKET_MS` when the outcomes were folded.
    pub index: u64,
    pub successes: u64,
    pub failures: u64,
    /// Prompt tokens of served answers folded in this bucket, and those read from the prompt
    /// cache (absent from an older object's snapshot).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prompt_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
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
                b.prompt_tokens = b.prompt_tokens.saturating_add(batch.prompt_tokens);
                b.cached_tokens = b.cached_tokens.saturating_add(batch.cached_tokens);
            }
            _ => self.window.insert(
                0,
                WindowBucket {
                    index,
                    successes: batch.successes,
                    failures: batch.failures,
                    prompt_tokens: batch.prompt_tokens,
                    cached_tokens: batch.cached_tokens,
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

    /// The buckets of the window ending now.
    fn in_window(&self, now: u64) -> impl Iterator<Item = &WindowBucket> {
        let index = now / WINDOW_BUCKET_MS;
        let oldest = index.saturating_sub(WINDOW_BUCKETS as u64 - 1);
        self.window
            .iter()
            .filter(move |b| b.index >= oldest && b.index <= index)
    }

    /// Successes over successes plus counted failures in the window ending now.
    pub fn success_rate(&self, now: u64) -> Option<f64> {
        let (ok, failed) = self
            .in_window(now)
            .fold((0u64, 0u64), |(s, f), b| (s + b.successes, f + b.failures));
        let total = ok + failed;
        (total > 0).then(|| ok as f64 / total as f64)
    }

    /// Cache reads over prompt tokens of the served answers in the window ending now (0 to 1);
    /// `None` while no reported prompt token is in it.
    pub fn cached_share(&self, now: u64) -> Option<f64> {
        let (prompt, cached) = self.in_window(now).fold((0u64, 0u64), |(p, c), b| {
            (
                p.saturating_add(b.prompt_tokens),
                c.saturating_add(b.cached_tokens),
            )
        });
        (prompt > 0).then(|| (cached as f64 / prompt as f64).min(1.0))
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
            cached_share: self.cached_share(now),
            ..ModelHealth::default()
        }
    }
}

#[cfg(test)]
#[path = "model_stats_tests.rs"]
mod tests;
