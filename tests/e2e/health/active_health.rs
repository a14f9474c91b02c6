//! Active health end to end on workerd: the cron handler (run through Miniflare's `scheduled`) closes a
//! recovered breaker with one probe, a tripped breaker reaches a webhook signed with the secret
//! the settings PUT showed, and degraded mode enters and leaves across passes.

use crate::support::gateway::{eventually, OwnGateway, Tenant};
use crate::support::resilience::now_ms;
use crate::support::webhook::{webhook, webhook_answering};
use cognigate::mock::{MockProvider, Reply, Rule};
use hmac::{Mac, SimpleHmac};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// This module's own gateway, as when each file was a test binary: each scheduled pass visits every
/// watched tenant (50 at most) and probes their due breakers, so another module's tenants would be
/// probed by these passes or crowd these out. Its tests run one at a time.
static OWN: OwnGateway = OwnGateway::new();

fn health(t: &Tenant<'_>) -> Value {
    t.gw.request("GET", "/v1/health", Some(&t.key), None).json()
}

fn events(t: &Tenant<'_>) -> Vec<Value> {
    let r = t.gw.admin("GET", &t.path("/events?since=0"), None);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()["data"].as_array().cloned().unwrap_or_default()
}

fn kinds(t: &Tenant<'_>) -> Vec<String> {
    events(t)
        .iter()
        .map(|e| e["event"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Fails `model` `n` times with 503 through the gateway.
fn trip(t: &Tenant<'_>, mock: &MockProvider, model: &str, n: usize) {
    mock.push(Rule::any(Reply::status(503)).model(model).times(n));
    for _ in 0..n {
        assert_eq!(t.chat(model).status, 502);
    }
}

#[test]
fn a_breaker_whose_upstream_recovered_is_closed_by_one_scheduled_probe_of_max_tokens_1() {
    let (gw, _one) = OWN.alone();
    let mock = MockProvider::start("probe").unwrap();
    let t = gw.tenant("probe");
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 2, "open_duration_ms": 1000}}),
    );
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model("m", "p", 1.0, 8000);
    trip(&t, &mock, "m", 2);
    // The upstream recovered; nobody asks for `m`.
    mock.clear();
    eventually("half-open", Duration::from_secs(10), || {
        health(&t)["breakers"][0]["state"] == "half_open"
    });
    gw.scheduled(now_ms());
    let calls = mock.calls();
    assert_eq!(calls.len(), 1, "exactly one probe call");
    assert_eq!(calls[0].body["max_tokens"], json!(1));
    assert_eq!(calls[0].model.as_deref(), Some("m"));
    assert_eq!(
        health(&t)["breakers"],
        json!([]),
        "closed with no user request"
    );
    let kinds = kinds(&t);
    assert!(kinds.contains(&"breaker.probe".to_owned()), "{kinds:?}");
    assert!(kinds.contains(&"breaker.closed".to_owned()), "{kinds:?}");
    // Closed and healthy: the next pass sends nothing.
    gw.scheduled(now_ms());
    assert_eq!(mock.count(), 1);
}

#[test]
fn with_probes_false_the_scheduled_pass_leaves_the_breaker_to_user_traffic() {
    let (gw, _one) = OWN.alone();
    let mock = MockProvider::start("noprobe").unwrap();
    let t = gw.tenant("noprobe");
    t.put_ok(
        "/settings",
        json!({"probes": false, "breaker": {"error_threshold": 1, "open_duration_ms": 500}}),
    );
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model("m", "p", 1.0, 8000);
    trip(&t, &mock, "m", 1);
    mock.clear();
    std::thread::sleep(Duration::from_millis(600));
    gw.scheduled(now_ms());
    assert_eq!(mock.count(), 0);
    assert_eq!(health(&t)["breakers"][0]["state"], "half_open");
}

#[test]
fn a_tripped_breaker_reaches_the_webhook_within_10_s_signed_with_the_secret_shown_once() {
    let (gw, _one) = OWN.alone();
    let (url, got) = webhook();
    let mock = MockProvider::start("alert").unwrap();
    let t = gw.tenant("alert");
    let put = t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 2}, "alerts": {"webhook_url": url, "events": ["breaker.opened"]}}),
    );
    let secret = put.json()["alerts"]["secret"].as_str().unwrap().to_owned();
    let read = t.gw.admin("GET", &t.path("/settings"), None).json();
    assert_eq!(read["alerts"].get("secret"), None, "shown once");
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model("m", "p", 1.0, 8000);
    trip(&t, &mock, "m", 2);
    let tripped = Instant::now();
    eventually("webhook POST", Duration::from_secs(10), || {
        !got.lock().unwrap().is_empty()
    });
    assert!(tripped.elapsed() < Duration::from_secs(10));
    let (headers, body) = got.lock().unwrap()[0].clone();
    let header = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    // `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` under the whole secret.
    let signature = header("x-cognigate-signature");
    let signed_at: u64 = signature
        .strip_prefix("t=")
        .and_then(|r| r.split(',').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{signature}"));
    assert!(signed_at.abs_diff(now_ms() / 1000) <= 300, "{signature}");
    let mut mac = <SimpleHmac<sha2::Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{signed_at}.").as_bytes());
    mac.update(&body);
    let expected = format!(
        "t={signed_at},v1={}",
        hex::encode(mac.finalize().into_bytes())
    );
    assert_eq!(signature, expected);
    assert!(header("x-cognigate-event-id").starts_with("evt_"));
    let event: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(event["type"], "breaker.opened");
    assert_eq!(event["tenant"], json!(t.id));
    assert_eq!(event["provider"], "p");
    assert_eq!(event["model"], "m");
    assert!(
        event["transition_seq"].as_u64().is_some() && event["breaker_until"].as_u64().is_some()
    );
    assert!(event["reason"].as_str().is_some() && event["time"].as_u64().is_some());
    eventually("delivery outcome", Duration::from_secs(10), || {
        kinds(&t).contains(&"alert.delivered".to_owned())
    });
    // Only the subscribed event: the closing is not POSTed.
    t.gw.admin("POST", &t.path("/breakers/reset"), None);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(got.lock().unwrap().len(), 1);
}

#[test]
fn degraded_mode_enters_and_exits_across_passes_with_its_events_and_health() {
    let (gw, _one) = OWN.alone();
    let mock = MockProvider::start("degraded").unwrap();
    let t = gw.tenant("degraded");
    t.put_ok(
        "/settings",
        json!({"probes": false, "breaker": {"error_threshold": 1, "open_duration_ms": 600000},
               "degraded": {"entry_grace_ms": 5000, "exit_grace_ms": 5000}}),
    );
    for p in ["p1", "p2", "p3"] {
        t.provider(p, &mock.url(), &["sk-1"], "failover");
        t.model(&format!("m-{p}"), p, 1.0, 8000);
    }
    trip(&t, &mock, "m-p1", 1);
    trip(&t, &mock, "m-p2", 1);
    let t0 = now_ms();
    gw.scheduled(t0);
    assert_eq!(
        health(&t)["degraded"],
        Value::Null,
        "not before the entry grace"
    );
    gw.scheduled(t0 + 5_000);
    assert_eq!(health(&t)["degraded"], json!({"since": t0 + 5_000}));
    let degraded = events(&t)
        .into_iter()
        .find(|e| e["event"] == "tenant.degraded")
        .expect("tenant.degraded event");
    assert_eq!(degraded["time"], json!(t0 + 5_000));
    // Back at 3 of 3: still degraded through the exit grace, then recovered.
    let r = t.gw.admin("POST", &t.path("/breakers/reset"), None);
    assert_eq!(r.status, 200);
    gw.scheduled(t0 + 6_000);
    assert_eq!(health(&t)["degraded"], json!({"since": t0 + 5_000}));
    assert!(!kinds(&t).contains(&"tenant.recovered".to_owned()));
    gw.scheduled(t0 + 11_000);
    assert_eq!(health(&t)["degraded"], Value::Null);
    assert!(kinds(&t).contains(&"tenant.recovered".to_owned()));
}

#[test]
fn a_tenant_with_fewer_than_min_providers_is_never_degraded() {
    let (gw, _one) = OWN.alone();
    let mock = MockProvider::start("few").unwrap();
    let t = gw.tenant("few");
    t.put_ok(
        "/settings",
        json!({"probes": false, "breaker": {"error_threshold": 1, "open_duration_ms": 600000},
               "degraded": {"entry_grace_ms": 0}}),
    );
    t.provider("p1", &mock.url(), &["sk-1"], "failover");
    t.model("m-p1", "p1", 1.0, 8000);
    trip(&t, &mock, "m-p1", 1);
    gw.scheduled(now_ms());
    gw.scheduled(now_ms() + 1_000);
    assert_eq!(health(&t)["degraded"], Value::Null);
    assert!(!kinds(&t).contains(&"tenant.degraded".to_owned()));
}

#[test]
fn a_spent_budget_is_one_budget_exceeded_event_and_alert_not_one_per_refused_request() {
    let (gw, _one) = OWN.alone();
    let (url, got) = webhook();
    let (t, _mock) = gw.tenant_with_mock("budget", &["sk-1"], "round_robin");
    t.model("priced", "p", 100.0, 8000);
    t.put_ok(
        "/settings",
        json!({"alerts": {"webhook_url": url, "events": ["budget.exceeded"]}}),
    );
    let (_, key) = t.key_with(json!({"budget": {"usd": 0.001, "period": "day"}}));
    let body = json!({"model": "priced", "messages": [{"role": "user", "content": "hello"}]});
    let send = || {
        t.gw.request(
            "POST",
            "/v1/chat/completions",
            Some(&key),
            Some(&body.to_string()),
        )
        .status
    };
    assert_eq!(send(), 200);
    eventually("the budget to be spent", Duration::from_secs(10), || {
        send() == 402
    });
    for _ in 0..3 {
        assert_eq!(send(), 402);
    }
    eventually("budget alert", Duration::from_secs(10), || {
        !got.lock().unwrap().is_empty()
    });
    let (_, raw) = got.lock().unwrap()[0].clone();
    let event: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(event["type"], "budget.exceeded");
    assert!(event["reason"].as_str().unwrap().contains("API key"));
    std::thread::sleep(Duration::from_millis(500));
    let n = kinds(&t).iter().filter(|k| *k == "budget.exceeded").count();
    assert_eq!(n, 1, "once per window, not per refused request");
    assert_eq!(got.lock().unwrap().len(), 1);
}

#[test]
fn a_redirecting_webhook_is_not_followed_and_the_failure_is_in_the_events_list() {
    let (gw, _one) = OWN.alone();
    let (elsewhere, followed) = webhook();
    let (url, got) = webhook_answering("302 Found", format!("location: {elsewhere}\r\n"));
    let mock = MockProvider::start("redirect").unwrap();
    let t = gw.tenant("redirect");
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 1}, "alerts": {"webhook_url": url, "events": ["breaker.opened"]}}),
    );
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model("m", "p", 1.0, 8000);
    trip(&t, &mock, "m", 1);
    eventually("alert.failed", Duration::from_secs(10), || {
        kinds(&t).contains(&"alert.failed".to_owned())
    });
    assert_eq!(got.lock().unwrap().len(), 1);
    assert!(
        followed.lock().unwrap().is_empty(),
        "the redirect was not followed"
    );
    let failed = events(&t)
        .into_iter()
        .find(|e| e["event"] == "alert.failed")
        .unwrap();
    assert!(
        failed["reason"].as_str().unwrap().contains("302"),
        "{failed}"
    );
}

#[test]
fn the_pass_deletes_events_older_than_30_days_and_roll_ups_older_than_400_days() {
    let (gw, _one) = OWN.alone();
    let t = gw.tenant("retention");
    let now = now_ms();
    let day = 86_400_000;
    let event = |at: u64| {
        json!({"event": "breaker.closed", "tenant": t.id, "provider": "p", "model": "m",
               "reason": "old", "time": at})
        .to_string()
    };
    for at in [now - 31 * day, now - 29 * day] {
        gw.sql(
            "INSERT INTO events (tenant_id, kind, at, body) VALUES (?1, 'breaker.closed', ?2, ?3)",
            &[json!(t.id), json!(at), json!(event(at))],
        );
    }
    for minute in [now - 401 * day, now - 399 * day] {
        let minute = minute - minute % 60_000;
        gw.sql(
            "INSERT INTO usage_rollups (tenant_id, minute, model, provider, key_id, end_user, \
             requests, prompt_tokens, completion_tokens, cached_tokens, cost_usd) \
             VALUES (?1, ?2, 'm', 'p', 'k', '', 1, 1, 1, 0, 0.0)",
            &[json!(t.id), json!(minute)],
        );
    }
    gw.scheduled(now);
    let times: Vec<u64> = events(&t)
        .iter()
        .filter_map(|e| e["time"].as_u64())
        .collect();
    assert_eq!(times, vec![now - 29 * day]);
    let rows = gw.sql(
        "SELECT minute FROM usage_rollups WHERE tenant_id = ?1",
        &[json!(t.id)],
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0]["minute"].as_u64().unwrap() > now - 400 * day);
}

#[test]
fn while_degraded_a_request_skips_a_due_breaker_and_leaves_its_probe_to_the_pass() {
    let (gw, _one) = OWN.alone();
    let mock = MockProvider::start("leave").unwrap();
    let t = gw.tenant("leave");
    let settings = json!({"breaker": {"error_threshold": 1, "open_duration_ms": 1000},
                          "degraded": {"entry_grace_ms": 0, "exit_grace_ms": 0}});
    t.put_ok("/settings", settings.clone());
    for p in ["p1", "p2", "p3"] {
        t.provider(p, &mock.url(), &["sk-1"], "failover");
        t.model(&format!("m-{p}"), p, 1.0, 8000);
    }
    t.rule("chain", &["m-p1", "m-p3"]);
    trip(&t, &mock, "m-p1", 1);
    trip(&t, &mock, "m-p2", 1);
    gw.scheduled(now_ms());
    assert!(health(&t)["degraded"]["since"].is_u64(), "1 of 3 usable");
    // The same settings again: this isolate drops its cached config and reads the state.
    t.put_ok("/settings", settings);
    mock.clear();
    std::thread::sleep(Duration::from_millis(1100));
    let r = t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("m-p3"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
    let probed = |m: &str| {
        mock.calls()
            .iter()
            .filter(|c| c.model.as_deref() == Some(m))
            .count()
    };
    assert_eq!(probed("m-p1"), 0, "no user probe while degraded");
    // The pass probes both due breakers, closes them and the tenant recovers.
    gw.scheduled(now_ms());
    assert_eq!((probed("m-p1"), probed("m-p2")), (1, 1));
    assert_eq!(health(&t)["breakers"], json!([]));
    assert_eq!(health(&t)["degraded"], Value::Null);
}
