//! Routing state that never drifts, end to end: park windows bounded by `MAX_PARK_MS` and freed by
//! a breaker reset, breaker news that survives an absurd park, and a streaming probe held for as
//! long as its stream runs.

use crate::support::gateway::{eventually, Gateway, Tenant};
use cognigate::mock::{chunk_event, MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};
use std::sync::mpsc::Receiver;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// This module's own gateway, as when each file was a test binary: the check that no routing report
/// was lost reads the whole worker log.
fn gateway() -> &'static Gateway {
    static GW: OnceLock<Gateway> = OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[]))
}

/// A gateway whose parks last at most 1.5 s and whose requests (so also probes) have a 2 s budget.
fn short() -> &'static Gateway {
    static GW: OnceLock<Gateway> = OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[("MAX_PARK_MS", "1500"), ("REQUEST_BUDGET_MS", "2000")]))
}

fn rate_limited(retry_after: &str) -> Reply {
    Reply::json(429, r#"{"error":{"message":"slow down"}}"#).header("Retry-After", retry_after)
}

fn breakers(t: &Tenant<'_>) -> Vec<Value> {
    t.gw.request("GET", "/v1/health", Some(&t.key), None).json()["breakers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// sk-1 answers one 429 with `retry_after`; the next request going straight to sk-2 shows the park.
fn park_sk1<'g>(gw: &'g Gateway, hint: &str, retry_after: &str) -> (Tenant<'g>, MockProvider) {
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1", "sk-2"], "failover");
    mock.push(Rule::any(rate_limited(retry_after)).key("sk-1").times(1));
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), ["sk-1", "sk-2", "sk-2"], "sk-1 is parked");
    (t, mock)
}

#[test]
fn a_century_long_retry_after_parks_the_key_for_max_park_ms_only() {
    let (t, mock) = park_sk1(short(), "clamp", "3153600000");
    std::thread::sleep(Duration::from_millis(1_600));
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(
        mock.keys().last().map(String::as_str),
        Some("sk-1"),
        "the 100-year park ended at MAX_PARK_MS"
    );
}

#[test]
fn breakers_reset_without_a_body_frees_the_tenants_parked_keys_at_once() {
    let gw = gateway();
    let (t, mock) = park_sk1(gw, "reset-all", "3153600000");
    let r = gw.admin("POST", &t.path("/breakers/reset"), None);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), ["sk-1", "sk-2", "sk-2", "sk-1"]);
}

#[test]
fn breakers_reset_for_a_model_frees_the_parked_keys_of_its_provider() {
    let gw = gateway();
    let (t, mock) = park_sk1(gw, "reset-model", "3153600000");
    let r = gw.admin(
        "POST",
        &t.path("/breakers/reset"),
        Some(json!({"provider": "p", "model": "m"})),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), ["sk-1", "sk-2", "sk-2", "sk-1"]);
}

#[test]
fn a_park_past_two_to_the_53_ms_no_longer_loses_the_breaker_failure_reported_with_it() {
    let gw = gateway();
    let (t, mock) = gw.tenant_with_mock("safe-int", &["sk-1", "sk-2"], "failover");
    assert_eq!(
        t.put("/settings", json!({"breaker": {"error_threshold": 2}}))
            .status,
        200
    );
    // Each request: sk-1 is rate limited for 1e14 s (1e17 ms, past 2^53), sk-2 fails with a
    // 500. The report carries both the park and a counted failure.
    for _ in 0..2 {
        mock.push(
            Rule::any(rate_limited("100000000000000"))
                .key("sk-1")
                .times(1),
        );
        mock.push(Rule::any(Reply::status(500)).key("sk-2").times(1));
        assert_eq!(t.chat("m").status, 502);
    }
    let before = mock.count();
    let r = t.chat("m");
    assert_eq!(
        r.json()["error"]["attempts"],
        json!([{"provider": "p", "model": "m", "failure": "breaker_open"}]),
        "both failures reached the breaker"
    );
    assert_eq!(mock.count(), before);
    assert!(
        !gw.log().contains("routing report lost"),
        "no report was lost"
    );
}

fn stream_request(model: &str) -> String {
    json!({"model": model, "stream": true, "messages": [{"role": "user", "content": "hi"}]})
        .to_string()
}

/// Starts a streamed request; its body chunks arrive on the channel.
fn open_stream(t: &Tenant<'_>, model: &str) -> (u16, Receiver<Vec<u8>>) {
    let (status, _, rx) = t.open_stream(&stream_request(model));
    (status, rx)
}

#[test]
fn a_streaming_probe_is_held_past_the_request_budget_and_a_concurrent_request_skips() {
    let gw = short();
    let (t, mock) = gw.tenant_with_mock("stream-probe", &["sk-1"], "failover");
    let r = t.put(
        "/settings",
        json!({"breaker": {"error_threshold": 1, "open_duration_ms": 1000}}),
    );
    assert_eq!(r.status, 200);
    mock.push(Rule::any(Reply::status(503)).times(1));
    assert_eq!(t.chat("m").status, 502);
    eventually("half-open", Duration::from_secs(10), || {
        breakers(&t)
            .first()
            .is_some_and(|b| b["state"] == "half_open")
    });
    // The probe's stream runs about 4.5 s, more than twice the 2 s budget.
    let mut steps = vec![Step::Data(chunk_event("m", "probe"))];
    for _ in 0..15 {
        steps.push(Step::Sleep(300));
        steps.push(Step::Data(chunk_event("m", ".")));
    }
    steps.push(Step::Data("[DONE]".into()));
    mock.push(Rule::any(Reply::stream(steps)).times(1));
    let started = Instant::now();
    let (status, rx) = open_stream(&t, "m");
    assert_eq!(status, 200);
    rx.recv_timeout(Duration::from_secs(10))
        .expect("first chunk");
    std::thread::sleep(Duration::from_millis(2_800).saturating_sub(started.elapsed()));
    let calls = mock.count();
    let r = t.chat("m");
    assert!(
        started.elapsed() < Duration::from_millis(4_000),
        "the check ran while the stream was still open"
    );
    assert_eq!(
        r.json()["error"]["attempts"],
        json!([{"provider": "p", "model": "m", "failure": "breaker_open"}]),
        "a second probe got in while the first one's stream ran: {}",
        r.text
    );
    assert_eq!(mock.count(), calls, "skipped with zero upstream calls");
    let mut body = Vec::new();
    while let Ok(chunk) = rx.recv_timeout(Duration::from_secs(10)) {
        body.extend(chunk);
    }
    assert!(String::from_utf8_lossy(&body).contains("[DONE]"));
    // The probe's stream completed: its report closes the breaker.
    eventually("closed", Duration::from_secs(5), || breakers(&t).is_empty());
    assert_eq!(t.chat("m").status, 200);
}
