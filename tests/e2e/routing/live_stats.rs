//! Live stats: every isolate's outcomes meet in the routing object of each
//! tenant/provider, and `GET /v1/models/metrics` (caller key) and `GET /admin/v1/tenants/{t}/stats`
//! show them per model: requests, success ratio (last 5 minutes), EWMAs of total latency and time
//! to response headers, breaker. Mock providers with scripted latencies and failures.

use crate::support::gateway::{Gateway, Tenant};
use cognigate::mock::{chunk_event, MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};
use std::time::Duration;

fn metrics(t: &Tenant<'_>, key: &str) -> Value {
    let r = t.gw.request("GET", "/v1/models/metrics", Some(key), None);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()
}

fn row<'a>(answer: &'a Value, model: &str) -> &'a Value {
    answer["data"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["model"] == model))
        .unwrap_or_else(|| panic!("no row for {model}: {answer}"))
}

fn models(answer: &Value) -> Vec<&str> {
    answer["data"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["model"].as_str()).collect())
        .unwrap_or_default()
}

/// m1 answers in 300 ms, m2 in 10 ms, m3 fails every other call, m4 is never asked.
fn measured_tenant<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).expect("mock");
    let t = gw.tenant(hint);
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    for m in ["m1", "m2", "m3", "m4"] {
        t.model(m, "p", 1.0, 8000);
    }
    mock.push(Rule::any(Reply::ok().delay(300)).model("m1"));
    mock.push(Rule::any(Reply::ok().delay(10)).model("m2"));
    for _ in 0..2 {
        assert_eq!(t.chat("m1").status, 200);
        assert_eq!(t.chat("m2").status, 200);
    }
    for _ in 0..2 {
        mock.push(Rule::any(Reply::status(500)).model("m3").times(1));
        assert_eq!(t.chat("m3").status, 502);
        assert_eq!(t.chat("m3").status, 200);
    }
    (t, mock)
}

#[test]
fn model_metrics_show_counts_success_ratios_and_the_latency_order() {
    let gw = Gateway::shared();
    let (t, _mock) = measured_tenant(gw, "stats-metrics");
    let answer = metrics(&t, &t.key);
    assert_eq!(
        models(&answer),
        ["m1", "m2", "m3", "m4"],
        "every model, by id"
    );
    let (m1, m2, m3, m4) = (
        row(&answer, "m1"),
        row(&answer, "m2"),
        row(&answer, "m3"),
        row(&answer, "m4"),
    );
    assert_eq!(
        (m1["requests"].as_u64(), m2["requests"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(m1["success_rate"].as_f64(), Some(1.0));
    let lat = |r: &Value, f: &str| r[f].as_f64().unwrap_or_else(|| panic!("{f} of {r}"));
    assert!(lat(m1, "latency_ms") >= 300.0, "{m1}");
    assert!(
        lat(m1, "ttfb_ms") >= 300.0,
        "the delay is before the headers: {m1}"
    );
    assert!(lat(m2, "latency_ms") < lat(m1, "latency_ms"), "{m1} {m2}");
    assert_eq!(m3["requests"].as_u64(), Some(4));
    assert_eq!(m3["success_rate"].as_f64(), Some(0.5), "{m3}");
    assert_eq!(m1["breaker"], "closed");
    assert_eq!(
        *m4,
        json!({"model": "m4", "provider": "p", "requests": 0, "success_rate": null,
               "latency_ms": null, "ttfb_ms": null, "breaker": "closed"}),
        "nothing measured: zero and nulls"
    );
}

#[test]
fn a_scoped_key_sees_only_its_models_and_the_admin_route_shows_the_same_rows() {
    let gw = Gateway::shared();
    let (t, _mock) = measured_tenant(gw, "stats-scoped");
    let (_, scoped) = t.key_with(json!({"models": ["m2", "m3"]}));
    assert_eq!(models(&metrics(&t, &scoped)), ["m2", "m3"]);
    let admin = gw.admin("GET", &t.path("/stats"), None);
    assert_eq!(admin.status, 200, "{}", admin.text);
    assert_eq!(admin.json()["data"], metrics(&t, &t.key)["data"]);
    assert_eq!(admin.json()["parked_keys"], json!([]), "no key parked");
    assert_eq!(
        gw.admin("GET", "/admin/v1/tenants/no-such-tenant-x/stats", None)
            .status,
        404
    );
    assert_eq!(
        gw.request("GET", "/v1/models/metrics", Some("cg-wrong"), None)
            .status,
        401
    );
}

#[test]
fn a_stream_counts_its_headers_time_at_its_start_and_its_total_time_at_its_end() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("stats-stream", &["sk-1"], "failover");
    mock.push(Rule::any(Reply::stream(vec![
        Step::Data(chunk_event("m", "Hello")),
        Step::Sleep(400),
        Step::Data(chunk_event("m", " world")),
        Step::Data("[DONE]".into()),
    ])));
    let body = json!({"model": "m", "stream": true,
        "messages": [{"role": "user", "content": "hi"}]})
    .to_string();
    let r = gw.request("POST", "/v1/chat/completions", Some(&t.key), Some(&body));
    assert_eq!(r.status, 200);
    assert!(r.text.contains("world"), "{}", r.text);
    let answer = metrics(&t, &t.key);
    let m = row(&answer, "m");
    assert_eq!(m["requests"].as_u64(), Some(1), "{m}");
    let ttfb = m["ttfb_ms"].as_f64().unwrap();
    let latency = m["latency_ms"].as_f64().unwrap();
    assert!(ttfb < 300.0, "headers come at once: {m}");
    assert!(latency >= 400.0, "the stream's whole time: {m}");
}

#[test]
fn a_timed_flush_carries_outcomes_to_the_object_after_the_request_without_a_round_trip_of_its_own()
{
    let gw = Gateway::start_durable_with(&[("LIVE_STATS_FLUSH_MS", "50")]);
    let (t, _mock) = gw.tenant_with_mock("stats-flush", &["sk-1"], "failover");
    let first = t.chat("m");
    assert_eq!(first.header("x-cognigate-do-calls"), Some("1"), "the grant");
    std::thread::sleep(Duration::from_millis(150));
    // Warm: the grant is held, and the outcome of the first request is due. The flush runs after
    // this response under `waitUntil`: not one of its Durable Object calls.
    let warm = t.chat("m");
    assert_eq!(warm.header("x-cognigate-do-calls"), Some("0"));
    std::thread::sleep(Duration::from_millis(500));
    let tenant = t.id.clone();
    // A fresh runtime: no isolate remembers anything; only the routing object's storage does.
    let gw = gw.restart();
    let r = gw.admin("GET", &format!("/admin/v1/tenants/{tenant}/stats"), None);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json()["data"][0]["requests"].as_u64(),
        Some(2),
        "{}",
        r.text
    );
}

#[test]
fn an_open_breaker_shows_as_open_with_its_failures_counted() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("stats-breaker", &["sk-1"], "failover");
    mock.set_default(Reply::status(503));
    // BREAKER_ERROR_THRESHOLD is 5: the fifth failure opens it, the sixth request is skipped.
    for _ in 0..6 {
        assert_eq!(t.chat("m").status, 502);
    }
    assert_eq!(mock.count(), 5);
    let answer = metrics(&t, &t.key);
    let m = row(&answer, "m");
    assert_eq!(m["breaker"], "open", "{m}");
    assert_eq!(
        m["requests"].as_u64(),
        Some(5),
        "a skipped attempt is no request: {m}"
    );
    assert_eq!(m["success_rate"].as_f64(), Some(0.0), "{m}");
    assert_eq!(m["latency_ms"], Value::Null, "nothing served: {m}");
}
