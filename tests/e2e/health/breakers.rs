//! Circuit breakers per tenant/provider/model in the routing Durable Object, end to end.

use crate::support::gateway::{eventually, Gateway, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::Duration;

fn health(t: &Tenant<'_>) -> Value {
    t.gw.request("GET", "/v1/health", Some(&t.key), None).json()
}

fn breakers(t: &Tenant<'_>) -> Vec<Value> {
    health(t)["breakers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn events(t: &Tenant<'_>) -> Vec<Value> {
    let r = t.gw.admin("GET", &t.path("/events?since=0"), None);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()["data"].as_array().cloned().unwrap_or_default()
}

/// A tenant whose provider `p` serves `flaky` and `steady` from one mock, with `backup` elsewhere.
struct Setup<'g> {
    t: Tenant<'g>,
    main: MockProvider,
    backup: MockProvider,
}

fn setup<'g>(gw: &'g Gateway, hint: &str, open_ms: u64) -> Setup<'g> {
    let main = MockProvider::start(hint).unwrap();
    let backup = MockProvider::start("backup").unwrap();
    let t = gw.tenant(hint);
    let r = t.put(
        "/settings",
        json!({"breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": open_ms}}),
    );
    assert_eq!(r.status, 200);
    t.provider("p", &main.url(), &["sk-main"], "failover");
    t.provider("b", &backup.url(), &["sk-backup"], "failover");
    t.model("flaky", "p", 1.0, 8000);
    t.model("steady", "p", 1.0, 8000);
    t.model("backup", "b", 1.0, 8000);
    t.rule("chain", &["flaky", "backup"]);
    Setup { t, main, backup }
}

/// Opens the breaker, then waits out its (short) open duration.
fn trip_until_half_open(s: &Setup<'_>) {
    trip(s);
    eventually("half-open", Duration::from_secs(10), || {
        breakers(&s.t)
            .first()
            .is_some_and(|b| b["state"] == "half_open")
    });
}

fn trip(s: &Setup<'_>) {
    s.main
        .push(Rule::any(Reply::status(503)).model("flaky").times(5));
    for _ in 0..5 {
        let r = s.t.chat("flaky");
        assert_eq!(r.status, 502, "{}", r.text);
    }
}

#[test]
fn five_503s_open_the_breaker_and_the_next_request_skips_it_with_zero_calls() {
    let gw = Gateway::shared();
    let s = setup(gw, "trip", 60_000);
    trip(&s);
    assert_eq!(s.main.count(), 5);
    let r = s.t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("backup"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
    assert_eq!(
        s.main.count(),
        5,
        "the open breaker made zero upstream calls"
    );
    let r = s.t.chat("flaky");
    assert_eq!(r.status, 502);
    assert_eq!(
        r.json()["error"]["attempts"],
        json!([{"provider": "p", "model": "flaky", "failure": "breaker_open"}])
    );
    assert_eq!(s.main.count(), 5);
}

#[test]
fn health_lists_the_open_breaker_with_breaker_until_and_nothing_without_credentials() {
    let gw = Gateway::shared();
    let s = setup(gw, "health", 60_000);
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    trip(&s);
    let b = breakers(&s.t);
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!(b[0]["provider"], "p");
    assert_eq!(b[0]["model"], "flaky");
    assert_eq!(b[0]["state"], "open");
    let until = b[0]["breaker_until"].as_u64().unwrap();
    assert!(
        until >= before + 60_000 && until <= before + 120_000,
        "{until} vs {before}"
    );
    let anonymous = gw.request("GET", "/v1/health", None, None);
    assert_eq!(anonymous.json(), json!({"status": "ok"}));
}

#[test]
fn another_model_of_the_same_provider_still_serves() {
    let gw = Gateway::shared();
    let s = setup(gw, "permodel", 60_000);
    trip(&s);
    let r = s.t.chat("steady");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(s.main.count(), 6);
}

#[test]
fn another_tenant_using_the_same_provider_name_is_unaffected() {
    let gw = Gateway::shared();
    let s = setup(gw, "tenant-a", 60_000);
    trip(&s);
    let other = gw.tenant("tenant-b");
    other.provider("p", &s.main.url(), &["sk-other"], "failover");
    other.model("flaky", "p", 1.0, 8000);
    let r = other.chat("flaky");
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(breakers(&other).is_empty());
}

#[test]
fn transitions_are_stored_as_events_and_a_manual_reset_closes_the_breaker() {
    let gw = Gateway::shared();
    let s = setup(gw, "events", 60_000);
    trip(&s);
    eventually("breaker.opened event", Duration::from_secs(5), || {
        events(&s.t).iter().any(|e| e["event"] == "breaker.opened")
    });
    let opened = events(&s.t)
        .into_iter()
        .find(|e| e["event"] == "breaker.opened")
        .unwrap();
    assert_eq!(opened["tenant"], s.t.id.as_str());
    assert_eq!(opened["provider"], "p");
    assert_eq!(opened["model"], "flaky");
    assert!(opened["breaker_until"].is_u64() && opened["time"].is_u64());
    assert!(opened["reason"].as_str().unwrap().contains("server"));
    // The structured log line is there too.
    eventually("breaker.opened log line", Duration::from_secs(10), || {
        gw.log()
            .lines()
            .any(|l| l.contains("breaker.opened") && l.contains(&s.t.id))
    });

    let r = gw.admin(
        "POST",
        &s.t.path("/breakers/reset"),
        Some(json!({"provider": "p", "model": "flaky"})),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json()["closed"],
        json!([{"provider": "p", "model": "flaky"}])
    );
    assert!(breakers(&s.t).is_empty());
    assert_eq!(s.t.chat("flaky").status, 200);
    eventually("breaker.closed event", Duration::from_secs(5), || {
        events(&s.t)
            .iter()
            .any(|e| e["event"] == "breaker.closed" && e["reason"] == "manual reset")
    });
    let since = gw.admin("GET", &s.t.path("/events?since=99999999999999"), None);
    assert_eq!(since.json()["data"], json!([]));
    assert_eq!(
        gw.admin("GET", &s.t.path("/events?since=yesterday"), None)
            .status,
        400
    );
}

#[test]
fn after_the_open_duration_twenty_concurrent_requests_make_exactly_one_upstream_call() {
    let gw = Gateway::shared();
    let s = setup(gw, "probe", 1_500);
    trip_until_half_open(&s);
    // The recovered model answers slowly, so the other 19 arrive while the probe is out.
    s.main
        .push(Rule::any(Reply::ok().delay(700)).model("flaky"));
    let before_main = s.main.count();
    let before_backup = s.backup.count();
    let key = s.t.key.clone();
    let url = gw.url.clone();
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let (key, url) = (key.clone(), url.clone());
            std::thread::spawn(move || {
                let req = ureq::http::Request::builder()
                    .method("POST")
                    .uri(format!("{url}/v1/chat/completions"))
                    .header("authorization", format!("Bearer {key}"))
                    .body(r#"{"model":"chain","messages":[]}"#.to_owned())
                    .unwrap();
                let resp = crate::support::gateway::agent().run(req).unwrap();
                (
                    resp.status().as_u16(),
                    resp.headers()
                        .get("x-cognigate-model")
                        .map(|v| v.to_str().unwrap().to_owned()),
                )
            })
        })
        .collect();
    let results: Vec<(u16, Option<String>)> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(results.iter().all(|(s, _)| *s == 200), "{results:?}");
    assert_eq!(
        s.main.count() - before_main,
        1,
        "exactly one probe reached the recovering model"
    );
    assert_eq!(s.backup.count() - before_backup, 19);
    assert_eq!(
        results
            .iter()
            .filter(|(_, m)| m.as_deref() == Some("flaky"))
            .count(),
        1
    );
    // The probe succeeded: closed outright.
    assert!(breakers(&s.t).is_empty(), "{:?}", breakers(&s.t));
    eventually("breaker.closed event", Duration::from_secs(5), || {
        events(&s.t)
            .iter()
            .any(|e| e["event"] == "breaker.closed" && e["reason"] == "probe succeeded")
    });
}

#[test]
fn a_failed_probe_reopens_the_breaker_for_a_full_duration() {
    let gw = Gateway::shared();
    let s = setup(gw, "reprobe", 1_000);
    trip_until_half_open(&s);
    s.main
        .push(Rule::any(Reply::status(503)).model("flaky").times(1));
    let r = s.t.chat("flaky");
    assert_eq!(r.status, 502);
    let b = breakers(&s.t);
    assert_eq!(
        b[0]["state"], "open",
        "one failed probe re-opens at once: {b:?}"
    );
    assert_eq!(s.main.count(), 6);
}

#[test]
fn rate_limits_and_request_caused_errors_do_not_count() {
    let gw = Gateway::shared();
    let s = setup(gw, "nocount", 60_000);
    s.main
        .push(Rule::any(Reply::status(429)).model("flaky").times(6));
    s.main
        .push(Rule::any(Reply::status(400)).model("flaky").times(6));
    for _ in 0..12 {
        s.t.chat("flaky");
    }
    assert!(breakers(&s.t).is_empty());
    assert_eq!(s.t.chat("flaky").status, 200);
}

#[test]
fn a_caller_that_gives_up_is_not_counted_against_the_model() {
    let gw = Gateway::shared();
    let s = setup(gw, "cancel", 60_000);
    s.main
        .push(Rule::any(Reply::ok().delay(1_500)).model("flaky").times(6));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_millis(200)))
        .build()
        .into();
    for _ in 0..6 {
        let req = ureq::http::Request::builder()
            .method("POST")
            .uri(format!("{}/v1/chat/completions", gw.url))
            .header("authorization", format!("Bearer {}", s.t.key))
            .body(r#"{"model":"flaky","messages":[]}"#.to_owned())
            .unwrap();
        assert!(agent.run(req).is_err(), "the caller gave up first");
    }
    eventually(
        "the six calls reached the mock",
        Duration::from_secs(5),
        || s.main.count() == 6,
    );
    std::thread::sleep(Duration::from_millis(1_600));
    assert!(breakers(&s.t).is_empty(), "{:?}", breakers(&s.t));
    assert_eq!(s.t.chat("flaky").status, 200);
}
