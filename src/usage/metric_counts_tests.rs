use super::*;

fn metric(model: &str, outcome: MetricOutcome, latency_ms: u64) -> RequestMetric {
    RequestMetric {
        model: model.into(),
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

#[test]
fn label_sets_past_the_cap_are_counted_under_other_so_totals_stay_exact() {
    let mut c = MetricCounts::default();
    for i in 0..MAX_LABEL_SETS + 10 {
        let mut m = metric(&format!("name-{i}"), MetricOutcome::Refused, 1);
        m.attempts.clear();
        m.cost_usd = None;
        c.observe(&m);
    }
    assert_eq!(c.requests.len(), MAX_LABEL_SETS + 1);
    assert_eq!(c.requests[&key(&[OTHER, OTHER])], 10);
    assert_eq!(
        c.requests.values().sum::<u64>(),
        (MAX_LABEL_SETS + 10) as u64
    );
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
