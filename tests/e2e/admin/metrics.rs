//! `GET /admin/v1/metrics`, end to end: Prometheus text read with prometheus-client's
//! own parser (`tests/harness/prom_parse.py`), counted in the tenant's ledger and routing
//! objects from every isolate, within 10 s of the traffic.

use crate::support::gateway::{Gateway, Tenant};
use crate::support::prometheus::value;
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// This module's own gateway, as when each file was a test binary: a scrape reads every tenant's
/// ledger and routing objects, and scraped within 10 s it must stay the size of this module's
/// tenants.
fn gateway() -> &'static Gateway {
    static GW: OnceLock<Gateway> = OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[]))
}

/// The scrape parsed by prometheus-client: `{"families": {name: type}, "samples": [...]}`.
fn scrape(gw: &Gateway) -> Value {
    crate::support::prometheus::scrape(gw).1
}

/// Scrapes until `done` holds (at most 10 s, the bound the README states); the last scrape.
fn scrape_until(gw: &Gateway, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let parsed = scrape(gw);
        if done(&parsed) || start.elapsed() > Duration::from_secs(10) {
            return parsed;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A tenant whose chain `chain` is `m1` then `m2`, both on provider `p` (one mock).
fn setup<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model("m1", "p", 1.0, 8000);
    t.model("m2", "p", 1.0, 8000);
    assert_eq!(t.rule("chain", &["m1", "m2"]).status, 200);
    (t, mock)
}

#[test]
fn six_served_and_one_exhausted_request_are_counted_exactly_in_parsed_prometheus_text() {
    let gw = gateway();
    let (t, mock) = setup(gw, "metrics");
    for i in 0..5 {
        let r = t.chat("chain");
        assert_eq!(r.status, 200, "{}", r.text);
        if i > 0 {
            // Counting adds no Durable Object call to a warm request: it rides the usage
            // settle, or a flush after the response.
            assert_eq!(r.header("x-cognigate-do-calls"), Some("0"), "request {i}");
        }
    }
    // The sixth streams: it is counted when the stream settles.
    let body =
        json!({"model": "chain", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/chat/completions", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("data: [DONE]"), "{}", r.text);
    // The 7th request fails on every position of its chain.
    mock.push(Rule::any(Reply::status(503)).times(2));
    let r = t.chat("chain");
    assert_eq!(r.status, 502, "{}", r.text);
    let tenant = t.id.as_str();
    let requests = "cognigate_requests_total";
    let parsed = scrape_until(gw, |p| {
        value(p, "cognigate_latency_ms_count", &[("tenant", tenant)]) >= 7.0
    });
    assert_eq!(
        parsed["families"]["cognigate_requests"], "counter",
        "{parsed}"
    );
    assert_eq!(parsed["families"]["cognigate_latency_ms"], "histogram");
    let served = [("tenant", tenant), ("model", "m1"), ("outcome", "served")];
    assert_eq!(value(&parsed, requests, &served), 6.0, "{parsed}");
    let exhausted = [
        ("tenant", tenant),
        ("model", "chain"),
        ("outcome", "exhausted"),
    ];
    assert_eq!(value(&parsed, requests, &exhausted), 1.0);
    assert_eq!(value(&parsed, requests, &[("tenant", tenant)]), 7.0);
    let attempts = "cognigate_upstream_attempts_total";
    let ok = [
        ("tenant", tenant),
        ("provider", "p"),
        ("model", "m1"),
        ("failure", "none"),
    ];
    assert_eq!(value(&parsed, attempts, &ok), 6.0);
    for model in ["m1", "m2"] {
        let failed = [
            ("tenant", tenant),
            ("provider", "p"),
            ("model", model),
            ("failure", "server"),
        ];
        assert_eq!(value(&parsed, attempts, &failed), 1.0, "{model}");
    }
    let cost = value(
        &parsed,
        "cognigate_cost_usd_total",
        &[("tenant", tenant), ("model", "m1")],
    );
    assert!(cost > 0.0, "cost {cost}");
    for h in [
        "cognigate_latency_ms",
        "cognigate_ttfb_ms",
        "cognigate_fallback_depth",
    ] {
        let count = value(&parsed, &format!("{h}_count"), &[("tenant", tenant)]);
        assert_eq!(count, 7.0, "{h}");
        let inf = value(
            &parsed,
            &format!("{h}_bucket"),
            &[("tenant", tenant), ("le", "+Inf")],
        );
        assert_eq!(inf, 7.0, "{h}: the +Inf bucket holds every observation");
    }
    let first = [("tenant", tenant), ("le", "0")];
    assert_eq!(
        value(&parsed, "cognigate_fallback_depth_bucket", &first),
        6.0
    );
    // The request log line says how each request ended.
    let line = gw.log_containing(&format!("\"tenant\":\"{tenant}\""));
    let exhausted_line = line
        .lines()
        .find(|l| l.contains("\"outcome\":\"exhausted\"") && l.contains(tenant))
        .unwrap_or_default();
    assert!(
        exhausted_line.contains("\"level\":\"warn\""),
        "{exhausted_line}"
    );
    let served_line = line
        .lines()
        .find(|l| l.contains("\"msg\":\"request\"") && l.contains("\"outcome\":\"served\""))
        .unwrap_or_default();
    assert!(served_line.contains("\"level\":\"info\""), "{served_line}");
    assert!(
        served_line.contains("\"usage\":{\"prompt_tokens\":"),
        "{served_line}"
    );
}

#[test]
fn a_caller_key_gets_401_from_the_metrics_endpoint() {
    let gw = gateway();
    let t = gw.tenant("metrics-401");
    let r = gw.request("GET", "/admin/v1/metrics", Some(&t.key), None);
    assert_eq!(r.status, 401, "{}", r.text);
    let admin_shape = gw.request("GET", "/admin/v1/tenants", Some(&t.key), None);
    assert_eq!(
        r.error_code(),
        admin_shape.error_code(),
        "the admin error shape"
    );
    assert_eq!(
        gw.request("GET", "/admin/v1/metrics", None, None).status,
        401
    );
}

#[test]
fn a_tripped_breaker_shows_as_open_in_the_metrics() {
    let gw = gateway();
    let (t, mock) = setup(gw, "metrics-breaker");
    let settings =
        json!({"breaker": {"error_threshold": 2, "window_ms": 30000, "open_duration_ms": 60000}});
    assert_eq!(t.put("/settings", settings).status, 200);
    mock.push(Rule::any(Reply::status(503)).model("m2").times(2));
    for _ in 0..2 {
        assert_eq!(t.chat("m2").status, 502);
    }
    let tenant = t.id.as_str();
    let open = [("tenant", tenant), ("provider", "p"), ("model", "m2")];
    let parsed = scrape_until(gw, |p| value(p, "cognigate_breaker_open", &open) == 1.0);
    assert_eq!(
        value(&parsed, "cognigate_breaker_open", &open),
        1.0,
        "{parsed}"
    );
    assert_eq!(parsed["families"]["cognigate_breaker_open"], "gauge");
    let parked = [("tenant", tenant), ("provider", "p")];
    assert!(parsed["samples"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "cognigate_parked_keys"
            && parked.iter().all(|(k, v)| s["labels"][*k] == *v)));
    // The next request skips the open breaker without a call: no candidates, not exhausted.
    assert_eq!(t.chat("m2").status, 502);
    let skipped = [
        ("tenant", tenant),
        ("model", "m2"),
        ("outcome", "no_candidates"),
    ];
    let parsed = scrape_until(gw, |p| {
        value(p, "cognigate_requests_total", &skipped) == 1.0
    });
    assert_eq!(
        value(&parsed, "cognigate_requests_total", &skipped),
        1.0,
        "{parsed}"
    );
    let failed = [
        ("tenant", tenant),
        ("model", "m2"),
        ("outcome", "exhausted"),
    ];
    assert_eq!(value(&parsed, "cognigate_requests_total", &failed), 2.0);
}

#[test]
fn a_request_refused_before_any_upstream_is_counted_by_the_timed_flush_within_10_s() {
    let gw = gateway();
    let (t, _mock) = setup(gw, "metrics-refused");
    // An unknown name: 404, no usage record, so no settle carries the count; the timed flush does.
    let r = t.chat("no-such-model");
    assert_eq!(r.status, 404, "{}", r.text);
    let tenant = t.id.as_str();
    let refused = [
        ("tenant", tenant),
        ("model", "no-such-model"),
        ("outcome", "refused"),
    ];
    let parsed = scrape_until(gw, |p| {
        value(p, "cognigate_requests_total", &refused) == 1.0
    });
    assert_eq!(
        value(&parsed, "cognigate_requests_total", &refused),
        1.0,
        "{parsed}"
    );
    let line = gw.log_containing("\"requested\":\"no-such-model\"");
    let line = line
        .lines()
        .find(|l| l.contains("\"requested\":\"no-such-model\"") && l.contains(tenant))
        .unwrap_or_default();
    assert!(line.contains("\"level\":\"warn\""), "{line}");
}

#[test]
fn with_the_analytics_binding_configured_every_request_writes_its_data_point_without_error() {
    // The harness adds the `ANALYTICS` dataset only when asked (Miniflare's is a no-op sink, so
    // this proves the call is well formed and costs the request nothing, not what it stored).
    let gw = Gateway::start_with_analytics();
    let (t, _mock) = setup(&gw, "metrics-ae");
    for model in ["chain", "no-such-model"] {
        t.chat(model);
    }
    let tenant = t.id.as_str();
    let counted = [("tenant", tenant)];
    let parsed = scrape_until(&gw, |p| {
        value(p, "cognigate_requests_total", &counted) == 2.0
    });
    assert_eq!(
        value(&parsed, "cognigate_requests_total", &counted),
        2.0,
        "{parsed}"
    );
    assert!(
        !gw.log().contains("analytics data point not written"),
        "{}",
        gw.log()
    );
}

#[test]
fn a_cache_hit_is_counted_served_by_the_stored_model_with_no_attempt_and_no_cost() {
    let gw = gateway();
    let (t, _mock) = setup(gw, "metrics-cache");
    t.put_ok("/settings", json!({"cache": {"ttl_s": 300}}));
    let miss = t.chat("m1");
    assert_eq!(miss.status, 200, "{}", miss.text);
    assert_eq!(miss.header("x-cognigate-cache"), Some("miss"));
    // The miss is stored under `waitUntil`; with DEBUG_COUNTERS the worker logs the write.
    let id = miss.header("x-cognigate-request-id").unwrap();
    gw.log_containing(&format!(r#""msg":"cache_stored","request_id":"{id}""#));
    let hit = t.chat("m1");
    assert_eq!(hit.header("x-cognigate-cache"), Some("hit"), "{}", hit.text);
    let tenant = t.id.as_str();
    let parsed = scrape_until(gw, |p| {
        value(p, "cognigate_latency_ms_count", &[("tenant", tenant)]) >= 2.0
    });
    let served = [("tenant", tenant), ("model", "m1"), ("outcome", "served")];
    assert_eq!(
        value(&parsed, "cognigate_requests_total", &served),
        2.0,
        "{parsed}"
    );
    // One upstream call: the hit made none.
    let attempts = [("tenant", tenant), ("model", "m1")];
    assert_eq!(
        value(&parsed, "cognigate_upstream_attempts_total", &attempts),
        1.0
    );
    // The hit costs nothing: the total is the miss's cost alone.
    let miss_cost: f64 = miss
        .header("x-cognigate-cost-usd")
        .unwrap()
        .parse()
        .unwrap();
    let cost = value(&parsed, "cognigate_cost_usd_total", &attempts);
    assert!((cost - miss_cost).abs() < 1e-9, "{cost} vs {miss_cost}");
    let line = gw.request_line(hit.header("x-cognigate-request-id").unwrap());
    assert_eq!(line["level"], "info", "{line}");
}
