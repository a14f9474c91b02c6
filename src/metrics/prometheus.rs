//! `GET /admin/v1/metrics` as text: the Prometheus text exposition format 0.0.4,
//! rendered from what the scrape gathered (each tenant's ledger counters, each routing object's
//! breakers and parked keys). Pure: the edge gathers, this writes.

use super::counts::{labels, Histogram, MetricCounts, DEPTH_BOUNDS, MS_BOUNDS};
use crate::config::SortedMap;
use std::fmt::Write;

pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One routing object's gauges: its models' breakers (open or not) and its parked keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderGauges {
    pub tenant: String,
    pub provider: String,
    /// Model → breaker open now.
    pub breakers: SortedMap<String, bool>,
    pub parked_keys: u64,
}

/// Everything one scrape read.
#[derive(Debug, Default)]
pub struct Scrape {
    /// Counters by tenant; a tenant listed twice (several objects' reads) is merged.
    pub counts: Vec<(String, MetricCounts)>,
    pub gauges: Vec<ProviderGauges>,
}

/// A label value as the format wants it: `\` → `\\`, `"` → `\"`, newline → `\n`; any other
/// control character is dropped (a carriage return or a NUL would split or end a line for some
/// readers), so no value can close its label set or start a line of its own.
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A sample value: integers without a point, `+Inf` for infinity.
fn number(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else if v.is_nan() {
        "NaN".to_owned()
    } else {
        format!("{v}")
    }
}

fn label_set(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, pairs: &[(&str, &str)], value: f64) {
    let _ = writeln!(out, "{name}{} {}", label_set(pairs), number(value));
}

fn histogram(out: &mut String, name: &str, tenant: &str, h: &Histogram, bounds: &[f64]) {
    for (le, count) in h.cumulative(bounds) {
        let le = number(le);
        let pairs = [("tenant", tenant), ("le", le.as_str())];
        sample(out, &format!("{name}_bucket"), &pairs, count as f64);
    }
    sample(out, &format!("{name}_sum"), &[("tenant", tenant)], h.sum);
    sample(
        out,
        &format!("{name}_count"),
        &[("tenant", tenant)],
        h.count as f64,
    );
}

/// A counter value as a sample.
trait Value: Copy {
    fn f64(self) -> f64;
}

impl Value for u64 {
    fn f64(self) -> f64 {
        self as f64
    }
}

impl Value for f64 {
    fn f64(self) -> f64 {
        self
    }
}

/// A counter family over every tenant: `names` label the key's parts.
fn counter<V: Value>(
    out: &mut String,
    tenants: &SortedMap<String, MetricCounts>,
    name: &str,
    help: &str,
    names: &[&str],
    family: impl Fn(&MetricCounts) -> &SortedMap<String, V>,
) {
    header(out, name, "counter", help);
    for (tenant, counts) in tenants {
        for (key, value) in family(counts) {
            let values = labels(key);
            let mut pairs = vec![("tenant", tenant.as_str())];
            pairs.extend(names.iter().copied().zip(values));
            sample(out, name, &pairs, value.f64());
        }
    }
}

/// A histogram family: name, help, bucket bounds, and where a tenant's counts keep it.
type HistogramFamily = (
    &'static str,
    &'static str,
    &'static [f64],
    fn(&MetricCounts) -> &Histogram,
);

/// The whole exposition.
pub fn render(scrape: &Scrape) -> String {
    let mut tenants: SortedMap<String, MetricCounts> = SortedMap::new();
    for (tenant, counts) in &scrape.counts {
        tenants.entry(tenant.clone()).or_default().merge(counts);
    }
    // A tenant with no request yet has no sample (an idle tenant adds no lines).
    tenants.retain(|_, c| !c.is_empty());
    let mut out = String::new();
    // Configured and unconfigured names are counted apart (each with its cap) and shown as one
    // family; a name counted in both (configured since) is one series.
    for counts in tenants.values_mut() {
        for (k, n) in std::mem::take(&mut counts.unconfigured) {
            *counts.requests.entry(k).or_default() += n;
        }
    }
    counter(
        &mut out,
        &tenants,
        "cognigate_requests_total",
        "Caller requests by the model that served (else the requested name) and outcome.",
        &["model", "outcome"],
        |c| &c.requests,
    );
    counter(
        &mut out,
        &tenants,
        "cognigate_upstream_attempts_total",
        "Upstream calls by provider, model and failure class (none: it answered).",
        &["provider", "model", "failure"],
        |c| &c.attempts,
    );
    counter(
        &mut out,
        &tenants,
        "cognigate_cost_usd_total",
        "Cost charged to served requests, in USD, by the model that served.",
        &["model"],
        |c| &c.cost_usd,
    );
    counter(
        &mut out,
        &tenants,
        "cognigate_otel_dropped_spans_total",
        "Spans of the tenant's trace export dropped: a batch its receiver refused or did not take.",
        &[],
        |c| &c.otel_dropped_spans,
    );
    let histograms: [HistogramFamily; 3] = [
        (
            "cognigate_fallback_depth",
            "Chain position that served (else the last one tried), 0 first.",
            DEPTH_BOUNDS,
            |c| &c.depth,
        ),
        (
            "cognigate_latency_ms",
            "Request arrival to the answer's last byte, in ms.",
            MS_BOUNDS,
            |c| &c.latency_ms,
        ),
        (
            "cognigate_ttfb_ms",
            "Request arrival to the answer's first byte (its headers; a stream's first event), in ms.",
            MS_BOUNDS,
            |c| &c.ttfb_ms,
        ),
    ];
    for (name, help, bounds, of) in histograms {
        header(&mut out, name, "histogram", help);
        for (tenant, counts) in &tenants {
            histogram(&mut out, name, tenant, of(counts), bounds);
        }
    }
    let name = "cognigate_breaker_open";
    header(
        &mut out,
        name,
        "gauge",
        "1 while the model's breaker is open, else 0.",
    );
    for g in &scrape.gauges {
        for (model, open) in &g.breakers {
            let pairs = [
                ("tenant", g.tenant.as_str()),
                ("provider", &g.provider),
                ("model", model),
            ];
            sample(&mut out, name, &pairs, if *open { 1.0 } else { 0.0 });
        }
    }
    let name = "cognigate_parked_keys";
    header(&mut out, name, "gauge", "Keys of the provider parked now.");
    for g in &scrape.gauges {
        let pairs = [("tenant", g.tenant.as_str()), ("provider", &g.provider)];
        sample(&mut out, name, &pairs, g.parked_keys as f64);
    }
    out
}

#[cfg(test)]
#[path = "prometheus_tests.rs"]
mod tests;
