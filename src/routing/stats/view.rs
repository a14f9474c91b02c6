//! The live stats answer of `GET /v1/models/metrics` and
//! `GET /admin/v1/tenants/{t}/stats`: one row per catalog model whose provider exists, by id.

use crate::config::SortedMap;
use crate::health::provider_state::BreakerStatus;
use crate::routing::stats::stats_book::StatsSnapshot;
use serde::Serialize;

/// One model's live stats. Nothing measured yet: zero requests and `null` numbers.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsRow {
    pub model: String,
    pub provider: String,
    /// Upstream attempts, every isolate, since the stats began.
    pub requests: u64,
    /// Successes over successes plus counted failures in the last 5 minutes (0 to 1).
    pub success_rate: Option<f64>,
    /// EWMA (alpha 0.3) of a served answer's total time, request sent to last byte, in ms.
    pub latency_ms: Option<f64>,
    /// EWMA (alpha 0.3) of a served answer's time to response headers, in ms.
    pub ttfb_ms: Option<f64>,
    pub breaker: BreakerState,
    /// While `breaker` is `open`: when it half-opens (epoch ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker_until: Option<u64>,
}

/// `GET /admin/v1/tenants/{t}/stats`: the rows, and the keys parked now (by id, never the key).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TenantStats {
    pub data: Vec<StatsRow>,
    pub parked_keys: Vec<ParkedKey>,
}

/// A key parked by a 429's `Retry-After` (or an auth cooldown), and when it is free.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParkedKey {
    pub provider: String,
    pub key: String,
    /// Epoch ms when the key is free again.
    pub until: u64,
}

impl ParkedKey {
    /// The keys parked at `now` in the providers' snapshots, by provider then key id.
    pub fn all(snapshots: &SortedMap<String, StatsSnapshot>, now: u64) -> Vec<ParkedKey> {
        snapshots
            .iter()
            .flat_map(|(provider, snap)| {
                snap.parked
                    .iter()
                    .filter(move |(_, until)| **until > now)
                    .map(move |(key, until)| ParkedKey {
                        provider: provider.clone(),
                        key: key.clone(),
                        until: *until,
                    })
            })
            .collect()
    }
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

impl StatsRow {
    /// The rows of `models` (id, provider) from the providers' snapshots (by provider name), as
    /// of `now`, sorted by model id. A provider without a snapshot shows its models unmeasured.
    pub fn rows<'a>(
        models: impl Iterator<Item = (&'a str, &'a str)>,
        snapshots: &SortedMap<String, StatsSnapshot>,
        now: u64,
    ) -> Vec<StatsRow> {
        let mut rows: Vec<StatsRow> = models
            .map(|(model, provider)| {
                let snap = snapshots.get(provider).and_then(|s| s.models.get(model));
                let stats = snap.and_then(|s| s.stats.as_ref());
                let health = stats.map(|s| s.health(now)).unwrap_or_default();
                let (breaker, breaker_until) = match snap.and_then(|s| s.breaker) {
                    None => (BreakerState::Closed, None),
                    Some(b) => match (b.state, b.until) {
                        (BreakerStatus::Open, Some(until)) if until > now => {
                            (BreakerState::Open, Some(until))
                        }
                        _ => (BreakerState::HalfOpen, None),
                    },
                };
                StatsRow {
                    model: model.to_owned(),
                    provider: provider.to_owned(),
                    requests: health.requests,
                    success_rate: health.success_rate,
                    latency_ms: health.latency_ms,
                    ttfb_ms: health.ttfb_ms,
                    breaker,
                    breaker_until,
                }
            })
            .collect();
        crate::config::sort::sort_by(&mut rows, |a, b| a.model.cmp(&b.model));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::ProviderState;
    use crate::routing::stats::model_stats::{OutcomeBatch, Sample};
    use crate::routing::stats::stats_book::{BreakerNow, ModelSnapshot, StatsBook, StatsPush};
    use serde_json::json;

    #[test]
    fn every_model_gets_a_row_by_id_unmeasured_ones_with_zero_requests_and_nulls() {
        let mut batch = OutcomeBatch::default();
        for s in [
            Sample::Served {
                ttfb_ms: 100,
                latency_ms: Some(300),
            },
            Sample::Failed { counted: true },
        ] {
            batch.add(s);
        }
        let mut book = StatsBook::default();
        book.fold(
            &StatsPush {
                batches: [("m1".to_owned(), batch)].into(),
                ..StatsPush::default()
            },
            1_000,
        );
        let mut snap = book.snapshot(&ProviderState::default(), 1_000);
        snap.models.insert(
            "m0".into(),
            ModelSnapshot {
                stats: None,
                breaker: Some(BreakerNow {
                    state: BreakerStatus::Open,
                    until: Some(9_000),
                }),
            },
        );
        let snapshots = [("p".to_owned(), snap)].into();
        let models = [("m2", "q"), ("m1", "p"), ("m0", "p")];
        let rows = StatsRow::rows(models.into_iter(), &snapshots, 2_000);
        assert_eq!(
            json!(rows),
            json!([
                {"model": "m0", "provider": "p", "requests": 0, "success_rate": null,
                 "latency_ms": null, "ttfb_ms": null, "breaker": "open", "breaker_until": 9000},
                {"model": "m1", "provider": "p", "requests": 2, "success_rate": 0.5,
                 "latency_ms": 300.0, "ttfb_ms": 100.0, "breaker": "closed"},
                {"model": "m2", "provider": "q", "requests": 0, "success_rate": null,
                 "latency_ms": null, "ttfb_ms": null, "breaker": "closed"},
            ])
        );
        let later = StatsRow::rows(models.into_iter(), &snapshots, 9_000);
        assert_eq!(later[0].breaker, BreakerState::HalfOpen, "open no more");
        assert_eq!(later[0].breaker_until, None);
    }

    #[test]
    fn parked_keys_are_listed_by_id_with_when_each_is_free_until_then() {
        use crate::config::{BreakerSettings, OpenDurations};
        use crate::health::provider_state::{Park, ReportRequest, Verdict};
        let mut state = ProviderState::default();
        let park = |key: &str, until| Park {
            key: key.into(),
            until,
        };
        let _ = state.report(
            &ReportRequest {
                model: "m".into(),
                parks: vec![park("k2", 5_000), park("k1", 3_000)],
                verdict: Verdict::Neutral,
                probe: None,
                breaker: BreakerSettings {
                    error_threshold: 1,
                    window_ms: 1_000,
                    open_duration_ms: 5_000,
                    open_durations_ms: OpenDurations::SINGLE,
                },
                scheduled: None,
            },
            1_000,
        );
        let snap = StatsBook::default().snapshot(&state, 1_000);
        let snapshots = [("p".to_owned(), snap)].into();
        assert_eq!(
            json!(ParkedKey::all(&snapshots, 2_000)),
            json!([{"provider": "p", "key": "k1", "until": 3000},
                   {"provider": "p", "key": "k2", "until": 5000}])
        );
        let later = ParkedKey::all(&snapshots, 3_000);
        assert_eq!(later.len(), 1, "k1 is free at its until: {later:?}");
    }
}
