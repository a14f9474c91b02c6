//! `/v1/providers/health` on workerd: each provider's last scheduled probe, its open breakers and
//! a count of its parked keys, for the providers a caller key's names reach.

use crate::support::gateway::{eventually, Gateway, OwnGateway, Tenant};
use crate::support::resilience::now_ms;
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::Duration;

/// This module's own gateway: a scheduled pass probes every watched tenant's due breakers, so
/// another module's tenants would be probed by these passes.
static OWN: OwnGateway = OwnGateway::new();

fn providers_health(t: &Tenant<'_>, key: &str) -> Value {
    let r = t.gw.request("GET", "/v1/providers/health", Some(key), None);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()
}

fn entry(answer: &Value, provider: &str) -> Value {
    let data = answer["data"].as_array().cloned().unwrap_or_default();
    data.into_iter()
        .find(|e| e["provider"] == provider)
        .unwrap_or_else(|| panic!("no entry for {provider} in {answer}"))
}

/// Providers p (model m, tripped at 2 failures, open 1 s) and q (model n), on one mock.
fn two_providers<'g>(gw: &'g Gateway, mock: &MockProvider, hint: &str) -> Tenant<'g> {
    let t = gw.tenant(hint);
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 2, "open_duration_ms": 1000}}),
    );
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.provider("q", &mock.url(), &["sk-2", "sk-3"], "failover");
    t.model("m", "p", 1.0, 8000);
    t.model("n", "q", 1.0, 8000);
    t
}

fn trip(t: &Tenant<'_>, mock: &MockProvider, model: &str, n: usize) {
    mock.push(Rule::any(Reply::status(503)).model(model).times(n));
    for _ in 0..n {
        assert_eq!(t.chat(model).status, 502);
    }
}

fn half_open(t: &Tenant<'_>) {
    eventually("half-open", Duration::from_secs(10), || {
        let h = t.gw.request("GET", "/v1/health", Some(&t.key), None).json();
        h["breakers"][0]["state"] == "half_open"
    });
}

#[test]
fn without_credentials_providers_health_is_401_in_the_openai_error_shape() {
    let r = OWN.get().request("GET", "/v1/providers/health", None, None);
    assert_eq!(r.status, 401, "{}", r.text);
    assert!(r.json()["error"]["message"].is_string(), "{}", r.text);
    let forged = OWN
        .get()
        .request("GET", "/v1/providers/health", Some("sk-nope"), None);
    assert_eq!(forged.status, 401);
}

#[test]
fn reachable_is_the_last_scheduled_probes_verdict_with_its_time_duration_and_failures_in_a_row() {
    let (gw, _one) = OWN.alone();
    let mock = MockProvider::start("ph-probe").unwrap();
    let t = two_providers(gw, &mock, "ph-probe");
    let before = providers_health(&t, &t.key);
    assert_eq!(
        entry(&before, "p"),
        json!({"provider": "p", "platform": "custom", "reachable": null, "last_probe_at": null,
               "last_probe_ms": null, "consecutive_failures": 0, "open_breakers": 0,
               "parked_keys": 0}),
        "no probe has run"
    );
    trip(&t, &mock, "m", 2);
    assert_eq!(
        entry(&providers_health(&t, &t.key), "p")["open_breakers"],
        1
    );
    // Still failing when the pass probes it, and slow to say so.
    half_open(&t);
    mock.push(Rule::any(Reply::status(503).delay(300)).model("m"));
    let sent = now_ms();
    gw.scheduled(now_ms());
    let failed = entry(&providers_health(&t, &t.key), "p");
    assert_eq!(failed["reachable"], false, "{failed}");
    assert_eq!(failed["consecutive_failures"], 1);
    assert_eq!(failed["open_breakers"], 1, "the failed probe re-opened it");
    let at = failed["last_probe_at"].as_u64().unwrap();
    assert!(at >= sent && at <= now_ms(), "{failed}");
    assert!(failed["last_probe_ms"].as_u64().unwrap() >= 300, "{failed}");
    assert_eq!(
        entry(&providers_health(&t, &t.key), "q")["reachable"],
        Value::Null
    );
    // Recovered: the next probe is served and clears the count.
    half_open(&t);
    mock.clear();
    gw.scheduled(now_ms());
    let served = entry(&providers_health(&t, &t.key), "p");
    assert_eq!(served["reachable"], true, "{served}");
    assert_eq!(served["consecutive_failures"], 0);
    assert_eq!(served["open_breakers"], 0);
    assert!(served["last_probe_at"].as_u64().unwrap() > at);
}

#[test]
fn parked_keys_are_a_count_and_never_key_ids() {
    let (gw, _one) = OWN.alone();
    let mock = MockProvider::start("ph-park").unwrap();
    let t = two_providers(gw, &mock, "ph-park");
    mock.push(
        Rule::any(Reply::status(429).header("retry-after", "600"))
            .key("sk-2")
            .times(1),
    );
    assert_eq!(t.chat("n").status, 200, "the second key serves");
    let answer = providers_health(&t, &t.key);
    assert_eq!(entry(&answer, "q")["parked_keys"], 1, "{answer}");
    assert!(!answer.to_string().contains("sk-"), "{answer}");
}

#[test]
fn a_scoped_key_sees_only_the_providers_its_names_reach() {
    let gw = OWN.get();
    let mock = MockProvider::start("ph-scope").unwrap();
    let t = two_providers(gw, &mock, "ph-scope");
    let (_, scoped) = t.key_with(json!({"models": ["n"]}));
    let seen = providers_health(&t, &scoped)["data"].clone();
    let names: Vec<&str> = seen
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["provider"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["q"]);
    let all = providers_health(&t, &t.key)["data"].clone();
    assert_eq!(all.as_array().unwrap().len(), 2);
}

#[test]
fn each_call_counts_against_the_keys_rpm() {
    let gw = OWN.get();
    let mock = MockProvider::start("ph-rpm").unwrap();
    let t = two_providers(gw, &mock, "ph-rpm");
    let (_, key) = t.key_with(json!({"rpm": 2}));
    for _ in 0..2 {
        providers_health(&t, &key);
    }
    let third = gw.request("GET", "/v1/providers/health", Some(&key), None);
    assert_eq!(third.status, 429, "{}", third.text);
    assert_eq!(third.error_code().as_deref(), Some("rate_limit_exceeded"));
}
