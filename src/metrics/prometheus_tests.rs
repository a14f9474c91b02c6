use super::*;
use crate::metrics::counts::{MetricOutcome, RequestMetric};

fn served(model: &str, latency_ms: u64) -> RequestMetric {
    RequestMetric {
        model: model.into(),
        configured: true,
        outcome: MetricOutcome::Served,
        depth: 0,
        ttfb_ms: latency_ms,
        latency_ms,
        attempts: vec![("p".into(), model.into(), "none")],
        cost_usd: Some(0.25),
    }
}

fn counts(metrics: &[RequestMetric]) -> MetricCounts {
    let mut c = MetricCounts::default();
    for m in metrics {
        c.observe(m);
    }
    c
}

#[test]
fn label_values_escape_backslash_quote_and_newline() {
    assert_eq!(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    let scrape = Scrape {
        counts: vec![("t".into(), counts(&[served("we\"ird\\\nname", 7)]))],
        gauges: Vec::new(),
    };
    let text = render(&scrape);
    assert!(
        text.contains(
            "cognigate_requests_total{tenant=\"t\",model=\"we\\\"ird\\\\\\nname\",outcome=\"served\"} 1\n"
        ),
        "{text}"
    );
    assert!(
        text.lines().all(|l| !l.is_empty()),
        "no raw newline in a value"
    );
}

#[test]
fn other_control_characters_are_dropped_from_label_values() {
    assert_eq!(escape_label("a\rb\u{0}c\u{1f}d\u{7f}e\tf"), "abcdef");
    let mut c = counts(&[served("m", 1)]);
    let mut unconfigured = served("x\r\n} 1\ny", 1);
    unconfigured.configured = false;
    c.observe(&unconfigured);
    let text = render(&Scrape {
        counts: vec![("t".into(), c)],
        gauges: Vec::new(),
    });
    assert!(!text.contains('\r'), "{text:?}");
    assert!(
        text.contains(
            "cognigate_requests_total{tenant=\"t\",model=\"x\\n} 1\\ny\",outcome=\"served\"} 1\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("cognigate_requests_total{tenant=\"t\",model=\"m\",outcome=\"served\"} 1\n"),
        "configured and unconfigured names are one family: {text}"
    );
    assert_eq!(text.matches("# TYPE cognigate_requests_total").count(), 1);
}

#[test]
fn histogram_buckets_are_cumulative_and_end_at_inf_with_the_count() {
    let scrape = Scrape {
        counts: vec![(
            "t".into(),
            counts(&[served("m", 3), served("m", 40), served("m", 99_000)]),
        )],
        gauges: Vec::new(),
    };
    let text = render(&scrape);
    assert!(
        text.contains("cognigate_latency_ms_bucket{tenant=\"t\",le=\"5\"} 1\n"),
        "{text}"
    );
    assert!(text.contains("cognigate_latency_ms_bucket{tenant=\"t\",le=\"50\"} 2\n"));
    assert!(text.contains("cognigate_latency_ms_bucket{tenant=\"t\",le=\"60000\"} 2\n"));
    assert!(text.contains("cognigate_latency_ms_bucket{tenant=\"t\",le=\"+Inf\"} 3\n"));
    assert!(text.contains("cognigate_latency_ms_count{tenant=\"t\"} 3\n"));
    assert!(text.contains("cognigate_latency_ms_sum{tenant=\"t\"} 99043\n"));
    assert!(text.contains("cognigate_fallback_depth_bucket{tenant=\"t\",le=\"0\"} 3\n"));
    assert!(text.contains("# TYPE cognigate_ttfb_ms histogram\n"));
}

#[test]
fn counters_read_from_several_objects_of_one_tenant_are_merged() {
    let scrape = Scrape {
        counts: vec![
            ("t".into(), counts(&[served("m", 1)])),
            ("u".into(), counts(&[served("m", 1)])),
            ("t".into(), counts(&[served("m", 1), served("m", 1)])),
        ],
        gauges: Vec::new(),
    };
    let text = render(&scrape);
    assert!(
        text.contains("cognigate_requests_total{tenant=\"t\",model=\"m\",outcome=\"served\"} 3\n"),
        "{text}"
    );
    assert!(
        text.contains("cognigate_requests_total{tenant=\"u\",model=\"m\",outcome=\"served\"} 1\n")
    );
    assert!(text.contains("cognigate_upstream_attempts_total{tenant=\"t\",provider=\"p\",model=\"m\",failure=\"none\"} 3\n"));
    assert!(text.contains("cognigate_cost_usd_total{tenant=\"t\",model=\"m\"} 0.75\n"));
    assert!(text.contains("cognigate_latency_ms_count{tenant=\"t\"} 3\n"));
}

#[test]
fn every_family_has_help_and_type_and_gauges_show_breakers_and_parked_keys() {
    let scrape = Scrape {
        counts: Vec::new(),
        gauges: vec![ProviderGauges {
            tenant: "t".into(),
            provider: "p".into(),
            breakers: [("m1".to_owned(), true), ("m2".to_owned(), false)].into(),
            parked_keys: 2,
        }],
    };
    let text = render(&scrape);
    for (name, kind) in [
        ("cognigate_requests_total", "counter"),
        ("cognigate_upstream_attempts_total", "counter"),
        ("cognigate_cost_usd_total", "counter"),
        ("cognigate_fallback_depth", "histogram"),
        ("cognigate_latency_ms", "histogram"),
        ("cognigate_ttfb_ms", "histogram"),
        ("cognigate_breaker_open", "gauge"),
        ("cognigate_parked_keys", "gauge"),
    ] {
        assert!(text.contains(&format!("# HELP {name} ")), "{name}");
        assert!(text.contains(&format!("# TYPE {name} {kind}\n")), "{name}");
    }
    assert!(text.contains("cognigate_breaker_open{tenant=\"t\",provider=\"p\",model=\"m1\"} 1\n"));
    assert!(text.contains("cognigate_breaker_open{tenant=\"t\",provider=\"p\",model=\"m2\"} 0\n"));
    assert!(text.contains("cognigate_parked_keys{tenant=\"t\",provider=\"p\"} 2\n"));
}

#[test]
fn a_tenant_without_requests_adds_no_sample_lines() {
    let scrape = Scrape {
        counts: vec![("idle".into(), MetricCounts::default())],
        gauges: Vec::new(),
    };
    assert!(!render(&scrape).contains("idle"));
}

#[test]
fn dropped_export_spans_are_counted_per_tenant_and_add_up_across_batches() {
    let mut one = MetricCounts::default();
    one.dropped_spans(3);
    let mut two = MetricCounts::default();
    two.dropped_spans(4);
    let scrape = Scrape {
        counts: vec![("t".into(), one), ("t".into(), two)],
        gauges: Vec::new(),
    };
    let text = render(&scrape);
    assert!(text.contains("# TYPE cognigate_otel_dropped_spans_total counter\n"));
    assert!(
        text.contains("cognigate_otel_dropped_spans_total{tenant=\"t\"} 7\n"),
        "{text}"
    );
}
