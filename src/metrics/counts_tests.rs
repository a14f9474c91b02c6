use super::*;

fn metric(model: &str, outcome: MetricOutcome, latency_ms: u64) -> RequestMetric {
    RequestMetric {
        model: model.into(),
        configured: true,
        outcome,
        depth: 1,
        ttfb_ms: latency_ms,
        latency_ms,
        attempts: vec![
            ("p".into(), "m1".into(), "server"),
            ("p".into(), model.into(), "none"),
        ],
        cost_usd: Some(0.5),
    }
}

#[test]
fn a_request_counts_its_outcome_its_attempts_its_cost_and_one_observation_per_histogram() {
    let mut c = MetricCounts::default();
    c.observe(&metric("m2", MetricOutcome::Served, 30));
    assert_eq!(c.requests[&key(&["m2", "served"])], 1);
    assert_eq!(c.attempts[&key(&["p", "m1", "server"])], 1);
    assert_eq!(c.attempts[&key(&["p", "m2", "none"])], 1);
    assert_eq!(c.cost_usd[&key(&["m2"])], 0.5);
    assert_eq!(
        (c.latency_ms.count, c.ttfb_ms.count, c.depth.count),
        (1, 1, 1)
    );
    assert_eq!(c.latency_ms.sum, 30.0);
}

#[test]
fn batches_merged_in_any_order_give_the_same_counts() {
    let (mut a, mut b) = (MetricCounts::default(), MetricCounts::default());
    a.observe(&metric("m", MetricOutcome::Served, 3));
    b.observe(&metric("m", MetricOutcome::Exhausted, 3_000));
    let mut ab = a.clone();
    ab.merge(&b);
    let mut ba = b.clone();
    ba.merge(&a);
    assert_eq!(ab, ba);
    assert_eq!(ab.latency_ms.count, 2);
    assert_eq!(ab.requests.len(), 2);
}

/// A refused request under a name the tenant did not configure.
fn unconfigured(name: &str) -> RequestMetric {
    let mut m = metric(name, MetricOutcome::Refused, 1);
    m.configured = false;
    m.attempts.clear();
    m.cost_usd = None;
    m
}

#[test]
fn label_sets_past_the_cap_are_counted_under_other_so_totals_stay_exact() {
    let mut c = MetricCounts::default();
    for i in 0..MAX_LABEL_SETS + 10 {
        c.observe(&unconfigured(&format!("name-{i}")));
    }
    assert_eq!(c.unconfigured.len(), MAX_LABEL_SETS + 1);
    assert_eq!(c.unconfigured[&key(&[OTHER, OTHER])], 10);
    assert_eq!(
        c.unconfigured.values().sum::<u64>(),
        (MAX_LABEL_SETS + 10) as u64
    );
}

#[test]
fn unknown_names_never_push_a_configured_models_series_into_other() {
    let mut flooded = MetricCounts::default();
    for i in 0..MAX_LABEL_SETS * 2 {
        flooded.observe(&unconfigured(&format!("made-up-{i}")));
    }
    flooded.observe(&metric("m1", MetricOutcome::Served, 5));
    flooded.observe(&metric("m1", MetricOutcome::Exhausted, 5));
    assert_eq!(flooded.requests[&key(&["m1", "served"])], 1);
    assert_eq!(flooded.requests[&key(&["m1", "exhausted"])], 1);
    // The same holds where batches meet: an isolate's, added into the ledger's.
    let mut ledger = MetricCounts::default();
    for i in 0..MAX_LABEL_SETS * 2 {
        ledger.observe(&unconfigured(&format!("other-{i}")));
    }
    ledger.merge(&flooded);
    assert_eq!(ledger.requests[&key(&["m1", "served"])], 1);
    assert!(!ledger.requests.contains_key(&key(&[OTHER, OTHER])));
    assert_eq!(ledger.unconfigured.len(), MAX_LABEL_SETS + 1);
}

#[test]
fn a_control_character_in_a_name_cannot_split_it_into_forged_labels() {
    let mut c = MetricCounts::default();
    c.observe(&unconfigured("m1\u{1f}served\r\u{0}\t"));
    let (k, n) = c.unconfigured.iter().next().unwrap();
    assert_eq!(labels(k), ["m1served", "refused"]);
    assert_eq!(*n, 1);
    // A newline is kept: the exposition format escapes it.
    assert_eq!(labels(&key(&["a\nb"])), ["a\nb"]);
}

#[test]
fn a_histogram_bucket_holds_values_up_to_and_including_its_bound() {
    let mut h = Histogram::default();
    for v in [0.0, 1.0, 1.5, 100.0] {
        h.observe(&[1.0, 2.0], v);
    }
    let cumulative: Vec<(f64, u64)> = h.cumulative(&[1.0, 2.0]).collect();
    assert_eq!(cumulative, [(1.0, 2), (2.0, 3), (f64::INFINITY, 4)]);
}

#[test]
fn counts_survive_their_json_round_trip() {
    let mut c = MetricCounts::default();
    c.observe(&metric("a\"b", MetricOutcome::Served, 12));
    let text = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<MetricCounts>(&text).unwrap(), c);
}
