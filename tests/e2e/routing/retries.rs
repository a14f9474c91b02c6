//! Retries end to end against scripted mocks: same-candidate retries, escalating breakers and
//! `Retry-After` on the aggregated 502 (rate-limit signals, benched credentials, `rpm` and the
//! context-window guard are in `spend::rate_limits`). Durations are configured short, not slept.

use crate::support::gateway::Gateway;
use crate::support::resilience::{breakers, eventually, provider, single};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[test]
fn a_503_then_200_with_max_retries_1_serves_at_depth_0_with_two_upstream_calls() {
    let gw = Gateway::shared();
    let retry = json!({"retry": {"max_retries": 1, "base_delay_ms": 200, "max_delay_ms": 200}});
    let (t, mock) = single(gw, "retry-once", &["sk-1"], retry);
    mock.push(Rule::any(Reply::status(503)).times(1));
    let r = t.chat("m");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("0"));
    assert_eq!(r.header("x-cognigate-model"), Some("m"));
    assert_eq!(mock.count(), 2, "the same candidate was called twice");
}

#[test]
fn retries_wait_a_backoff_between_tries_and_each_try_is_an_attempt_with_its_retry_index() {
    let gw = Gateway::shared();
    let retry = json!({"retry": {"max_retries": 5, "base_delay_ms": 1000, "max_delay_ms": 1000}});
    let (t, mock) = single(gw, "retry-wait", &["sk-1"], retry);
    // Six failures would open a breaker of the default threshold (5), which stops retries.
    t.put_ok("/settings", json!({"breaker": {"error_threshold": 10}}));
    mock.push(Rule::any(Reply::status(503)));
    let started = Instant::now();
    let r = t.chat("m");
    let took = started.elapsed();
    assert_eq!(r.status, 502, "{}", r.text);
    assert_eq!(mock.count(), 6);
    // Five full-jitter waits, each uniform in 0..=1000 ms: their sum falls under 250 ms with a
    // probability of 0.25^5/5! (about 8 in a million), while no waiting at all would take a few
    // ms. (With 0..=400 ms waits that was 0.625^5/5!, about 1 in 1,300, and it happened in CI.)
    assert!(took >= Duration::from_millis(250), "{took:?}");
    let attempts = r.json()["error"]["attempts"].clone();
    let retries: Vec<Value> = attempts
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["retry"].clone())
        .collect();
    assert_eq!(retries, (0..6).map(|i| json!(i)).collect::<Vec<_>>());
    assert!(attempts
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["failure"] == "server" && a["status"] == 503));
    assert_eq!(
        r.json()["error"]["message"],
        "All 1 routing candidates failed."
    );
}

#[test]
fn an_open_breaker_stops_the_retries_at_once() {
    let gw = Gateway::shared();
    let retry = json!({"retry": {"max_retries": 5, "base_delay_ms": 10, "max_delay_ms": 20}});
    let (t, mock) = single(gw, "retry-stop", &["sk-1"], retry);
    t.put_ok("/settings", json!({"breaker": {"error_threshold": 2}}));
    mock.push(Rule::any(Reply::status(503)));
    let r = t.chat("m");
    assert_eq!(r.status, 502, "{}", r.text);
    assert_eq!(
        mock.count(),
        2,
        "each try counted toward the breaker, which opened on the second"
    );
    assert_eq!(breakers(&t)[0]["state"], "open");
}

#[test]
fn a_400_is_still_exactly_one_call_with_retries_on() {
    let gw = Gateway::shared();
    let retry = json!({"retry": {"max_retries": 5, "base_delay_ms": 10, "max_delay_ms": 20}});
    let (t, mock) = single(gw, "retry-400", &["sk-1", "sk-2"], retry);
    mock.push(Rule::any(Reply::status(400)));
    let r = t.chat("m");
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(mock.count(), 1);
}

#[test]
fn bad_issue_17_fields_are_refused_with_a_400_naming_the_field() {
    let gw = Gateway::shared();
    let t = gw.tenant("fields");
    for (extra, field) in [
        (json!({"retry": {"max_retries": 6}}), "retry.max_retries"),
        (
            json!({"retry": {"max_retries": 1, "base_delay_ms": 500, "max_delay_ms": 100}}),
            "retry.max_delay_ms",
        ),
        (
            json!({"rate_limit_signals": ["sometimes"]}),
            "rate_limit_signals[0]",
        ),
        (json!({"rpm": 0}), "rpm"),
        (json!({"auth_cooldown_ms": -1}), "auth_cooldown_ms"),
    ] {
        let mut body =
            json!({"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "keys": ["sk-1"]});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let r = t.put("/providers/p", body);
        assert_eq!(r.status, 400, "{extra}: {}", r.text);
        assert_eq!(r.json()["error"]["param"], field, "{}", r.text);
    }
    let r = t.put(
        "/settings",
        json!({"breaker": {"open_durations_ms": [1000, 0]}}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.json()["error"]["param"], "breaker.open_durations_ms");
}

#[test]
fn open_durations_1000_3000_after_a_failed_probe_the_breaker_stays_open_about_3s_not_1s() {
    let gw = Gateway::shared();
    let (t, mock) = single(gw, "escalate", &["sk-1"], json!({}));
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 1, "open_durations_ms": [1000, 3000]}}),
    );
    mock.push(Rule::any(Reply::status(503)).times(2));
    assert_eq!(t.chat("m").status, 502);
    let b = breakers(&t);
    assert_eq!(b[0]["open_ms"], 1000, "{b:?}");
    eventually("half-open", Duration::from_secs(5), || {
        breakers(&t)
            .first()
            .is_some_and(|b| b["state"] == "half_open")
    });
    // The probe fails: the breaker re-opens for the second duration.
    let probed_at = Instant::now();
    assert_eq!(t.chat("m").status, 502);
    assert_eq!(mock.count(), 2);
    let b = breakers(&t);
    assert_eq!(
        (b[0]["state"].clone(), b[0]["open_ms"].clone()),
        (json!("open"), json!(3000)),
        "{b:?}"
    );
    // Still open well after one second...
    std::thread::sleep(Duration::from_millis(1_600));
    let r = t.chat("m");
    assert_eq!(
        r.json()["error"]["attempts"][0]["failure"],
        "breaker_open",
        "{}",
        r.text
    );
    assert_eq!(mock.count(), 2, "skipped with zero calls");
    // ...and half-open again at about three.
    eventually("half-open after 3 s", Duration::from_secs(5), || {
        breakers(&t)
            .first()
            .is_some_and(|b| b["state"] == "half_open")
    });
    assert!(
        probed_at.elapsed() >= Duration::from_millis(2_500),
        "{:?}",
        probed_at.elapsed()
    );
    assert_eq!(t.chat("m").status, 200, "a good probe closes");
    let events = t.gw.admin("GET", &t.path("/events?since=0"), None).json()["data"].clone();
    let open_ms: Vec<Value> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "breaker.opened")
        .map(|e| e["open_ms"].clone())
        .collect();
    assert_eq!(open_ms, [json!(1000), json!(3000)], "{events}");
}

#[test]
fn a_502_with_every_candidate_breaker_open_carries_retry_after_and_seed_000s_body() {
    let gw = Gateway::shared();
    let a = MockProvider::start("ra-a").unwrap();
    let b = MockProvider::start("ra-b").unwrap();
    let t = gw.tenant("ra");
    let r = t.put(
        "/settings",
        json!({"breaker": {"error_threshold": 1, "open_duration_ms": 30000}}),
    );
    assert_eq!(r.status, 200);
    provider(&t, "one", &a.url(), &["sk-a"], json!({}));
    provider(&t, "two", &b.url(), &["sk-b"], json!({}));
    t.model("m1", "one", 1.0, 8000);
    t.model("m2", "two", 1.0, 8000);
    t.rule("chain", &["m1", "m2"]);
    a.push(Rule::any(Reply::status(503)));
    b.push(Rule::any(Reply::status(503)));
    let r = t.chat("chain");
    assert_eq!(r.status, 502);
    assert_eq!(r.header("retry-after"), None, "a 503 has no known end");
    let r = t.chat("chain");
    assert_eq!(r.status, 502);
    let secs: u64 = r
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((25..=30).contains(&secs), "{secs}");
    assert_eq!(
        r.json(),
        json!({"error": {"type": "api_error", "code": "upstream_exhausted",
            "message": "All 2 routing candidates failed.",
            "attempts": [
                {"provider": "one", "model": "m1", "failure": "breaker_open"},
                {"provider": "two", "model": "m2", "failure": "breaker_open"}]}})
    );
}
