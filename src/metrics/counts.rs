//! The Prometheus counters of one tenant: requests by model and outcome, upstream
//! attempts by provider, model and failure class, cost by model, and three histograms (fallback
//! depth, latency, time to first byte). An isolate gathers them per tenant from the requests it
//! ends; its batches are added into the tenant's ledger object (`edge::metrics_sink`), which
//! the scrape reads. Counts only add up, so batches merge in any order: nothing is lost when a
//! failed call puts its batch back, and nothing is counted twice.

use crate::config::SortedMap;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Request label sets under names the tenant did not configure (chosen by callers) past this many
/// per tenant are counted under `OTHER` (the totals stay exact; a caller sending ever new model
/// names cannot grow the ledger's stored counters).
pub const MAX_LABEL_SETS: usize = 256;
/// Label sets of configured names (catalog ids, aliases, rule names) are capped apart, and far
/// higher: callers cannot fill this cap, so a configured model keeps its series whatever names
/// callers send. It only bounds storage for a catalog rewritten many times over.
pub const MAX_CONFIGURED_LABEL_SETS: usize = 4_096;
/// The label value standing for every label set past `MAX_LABEL_SETS`.
pub const OTHER: &str = "_other";
/// Label values (model names come from callers) are cut to this many bytes.
pub const MAX_LABEL_BYTES: usize = 128;

/// Upper bounds of the fallback-depth buckets (0: the first candidate served).
pub const DEPTH_BOUNDS: &[f64] = &[0.0, 1.0, 2.0, 3.0, 5.0, 8.0];
/// Upper bounds of the latency and time-to-first-byte buckets, in ms.
pub const MS_BOUNDS: &[f64] = &[
    5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1_000.0, 2_500.0, 5_000.0, 10_000.0, 30_000.0,
    60_000.0,
];

/// How a request ended, as the metrics name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricOutcome {
    /// An upstream answered.
    Served,
    /// At least one upstream was called and none served.
    Exhausted,
    /// No candidate could be called: none fit the request, or every one was skipped (breaker
    /// open, keys parked, `rpm` used up, context window).
    NoCandidates,
    /// The gateway answered without serving for another reason: a caller limit, a request the
    /// upstream refused as malformed, a model the key may not use, an unknown name.
    Refused,
}

impl MetricOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Served => "served",
            Self::Exhausted => "exhausted",
            Self::NoCandidates => "no_candidates",
            Self::Refused => "refused",
        }
    }
}

/// One request's facts, as the request path knows them when it ends.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMetric {
    /// The model that served, else the requested name.
    pub model: String,
    /// `model` is a name the tenant configured (a served model always is); else a caller's
    /// string, counted apart under `MAX_LABEL_SETS`.
    pub configured: bool,
    pub outcome: MetricOutcome,
    /// The serving candidate's chain position, else the last one tried (none tried: 0).
    pub depth: u32,
    /// Arrival to the gateway's answer headers (a stream's: its first event).
    pub ttfb_ms: u64,
    /// Arrival to the answer's last byte (a stream's end; else as `ttfb_ms`).
    pub latency_ms: u64,
    /// Every upstream call: (provider, model, failure class or `none`).
    pub attempts: Vec<(String, String, &'static str)>,
    pub cost_usd: Option<f64>,
}

/// A cumulative-ready histogram: `buckets[i]` counts observations in `(bounds[i-1], bounds[i]]`
/// and the last one those above every bound (`+Inf`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    #[serde(default)]
    pub buckets: Vec<u64>,
    #[serde(default)]
    pub sum: f64,
    #[serde(default)]
    pub count: u64,
}

impl Histogram {
    pub fn observe(&mut self, bounds: &[f64], value: f64) {
        self.buckets.resize(bounds.len() + 1, 0);
        let i = bounds
            .iter()
            .position(|b| value <= *b)
            .unwrap_or(bounds.len());
        if let Some(b) = self.buckets.get_mut(i) {
            *b = b.saturating_add(1);
        }
        self.sum += value;
        self.count = self.count.saturating_add(1);
    }

    pub fn merge(&mut self, other: &Self) {
        if self.buckets.len() < other.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a = a.saturating_add(*b);
        }
        self.sum += other.sum;
        self.count = self.count.saturating_add(other.count);
    }

    /// `(le, cumulative count)` for each bound, then `+Inf` with the total count.
    pub fn cumulative<'b>(&'b self, bounds: &'b [f64]) -> impl Iterator<Item = (f64, u64)> + 'b {
        let mut running = 0u64;
        bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .enumerate()
            .map(move |(i, le)| {
                running = running.saturating_add(self.buckets.get(i).copied().unwrap_or(0));
                (le, running)
            })
    }
}

/// Counters keyed by a label tuple joined with `\u{1f}` (serialisable as a JSON object key).
pub type Counter<V> = SortedMap<String, V>;

/// The counters of one tenant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricCounts {
    /// `model␟outcome` → requests under a configured name.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub requests: Counter<u64>,
    /// `model␟outcome` → requests under a name the tenant did not configure: counted apart, so
    /// that callers' names never push a configured model's series into `OTHER`.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub unconfigured: Counter<u64>,
    /// `provider␟model␟failure` → upstream calls.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub attempts: Counter<u64>,
    /// `model` → USD.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub cost_usd: Counter<f64>,
    /// Spans of the tenant's trace export dropped (a batch whose delivery failed), under the
    /// one key `""`.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub otel_dropped_spans: Counter<u64>,
    #[serde(default)]
    pub depth: Histogram,
    #[serde(default)]
    pub latency_ms: Histogram,
    #[serde(default)]
    pub ttfb_ms: Histogram,
}

const SEP: char = '\u{1f}';

/// A label value as counted: control characters other than a newline (which the exposition
/// format escapes) dropped, among them `SEP`, so a name cannot split into forged labels; then cut
/// to `MAX_LABEL_BYTES`.
fn label_value(value: &str) -> Cow<'_, str> {
    let dropped = |c: char| c != '\n' && c.is_control();
    let kept = if value.contains(dropped) {
        Cow::Owned(value.chars().filter(|c| !dropped(*c)).collect())
    } else {
        Cow::Borrowed(value)
    };
    match kept {
        Cow::Borrowed(v) => Cow::Borrowed(crate::config::text::truncated(v, MAX_LABEL_BYTES)),
        Cow::Owned(v) => Cow::Owned(crate::config::text::truncated(&v, MAX_LABEL_BYTES).to_owned()),
    }
}

/// A counter key from its label values (each as `label_value` keeps it).
pub fn key(labels: &[&str]) -> String {
    let kept: Vec<Cow<'_, str>> = labels.iter().map(|l| label_value(l)).collect();
    kept.join(&SEP.to_string())
}

/// A counter key's label values.
pub fn labels(key: &str) -> Vec<&str> {
    key.split(SEP).collect()
}

/// Adds `n` under `k`, or under the `OTHER` set (same arity) once the family holds `cap` sets.
fn add<V: Copy + std::ops::AddAssign + Default>(
    family: &mut Counter<V>,
    cap: usize,
    k: String,
    n: V,
) {
    let k = if family.len() >= cap && !family.contains_key(&k) {
        let arity = labels(&k).len();
        key(&vec![OTHER; arity])
    } else {
        k
    };
    *family.entry(k).or_default() += n;
}

impl MetricCounts {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
            && self.unconfigured.is_empty()
            && self.attempts.is_empty()
            && self.cost_usd.is_empty()
            && self.otel_dropped_spans.is_empty()
            && self.latency_ms.count == 0
            && self.ttfb_ms.count == 0
            && self.depth.count == 0
    }

    /// Attempts and cost name only models that were called, catalog ids: their families take
    /// the configured cap.
    pub fn observe(&mut self, m: &RequestMetric) {
        let k = key(&[&m.model, m.outcome.as_str()]);
        if m.configured {
            add(&mut self.requests, MAX_CONFIGURED_LABEL_SETS, k, 1);
        } else {
            add(&mut self.unconfigured, MAX_LABEL_SETS, k, 1);
        }
        for (provider, model, failure) in &m.attempts {
            let k = key(&[provider, model, failure]);
            add(&mut self.attempts, MAX_CONFIGURED_LABEL_SETS, k, 1);
        }
        if let Some(cost) = m.cost_usd.filter(|c| c.is_finite() && *c > 0.0) {
            add(
                &mut self.cost_usd,
                MAX_CONFIGURED_LABEL_SETS,
                key(&[&m.model]),
                cost,
            );
        }
        self.depth.observe(DEPTH_BOUNDS, f64::from(m.depth));
        self.latency_ms.observe(MS_BOUNDS, m.latency_ms as f64);
        self.ttfb_ms.observe(MS_BOUNDS, m.ttfb_ms as f64);
    }

    /// Spans of a trace export batch that was dropped.
    pub fn dropped_spans(&mut self, spans: u64) {
        *self.otel_dropped_spans.entry(String::new()).or_default() += spans;
    }

    /// Adds another batch (an isolate's, or one put back after a failed call).
    pub fn merge(&mut self, other: &Self) {
        let configured = MAX_CONFIGURED_LABEL_SETS;
        for (k, n) in &other.requests {
            add(&mut self.requests, configured, k.clone(), *n);
        }
        for (k, n) in &other.unconfigured {
            add(&mut self.unconfigured, MAX_LABEL_SETS, k.clone(), *n);
        }
        for (k, n) in &other.attempts {
            add(&mut self.attempts, configured, k.clone(), *n);
        }
        for (k, n) in &other.cost_usd {
            add(&mut self.cost_usd, configured, k.clone(), *n);
        }
        for (k, n) in &other.otel_dropped_spans {
            *self.otel_dropped_spans.entry(k.clone()).or_default() += n;
        }
        self.depth.merge(&other.depth);
        self.latency_ms.merge(&other.latency_ms);
        self.ttfb_ms.merge(&other.ttfb_ms);
    }
}

#[cfg(test)]
#[path = "counts_tests.rs"]
mod tests;
