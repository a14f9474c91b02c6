//! Helpers for the retry and rate-limit suites (`routing::retries`, `spend::rate_limits`).
#![allow(dead_code)]

use super::gateway::{Gateway, Tenant};
use cognigate::mock::MockProvider;
use serde_json::{json, Value};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Registers an OpenAI-compatible provider with the retry and rate-limit fields merged into the
/// usual body.
pub fn provider(t: &Tenant<'_>, name: &str, url: &str, keys: &[&str], extra: Value) {
    let mut body = json!({"kind": "openai", "base_url": url, "keys": keys, "key_strategy": "failover", "timeout_ms": 5000});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let r = t.put(&format!("/providers/{name}"), body);
    assert_eq!(r.status, 200, "provider: {}", r.text);
}

/// A tenant with provider `p` (these fields) serving model `m` from a fresh mock.
pub fn single<'g>(
    gw: &'g Gateway,
    hint: &str,
    keys: &[&str],
    extra: Value,
) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    provider(&t, "p", &mock.url(), keys, extra);
    t.model("m", "p", 1.0, 8000);
    (t, mock)
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

pub fn eventually(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn breakers(t: &Tenant<'_>) -> Vec<Value> {
    let r = t.gw.request("GET", "/v1/health", Some(&t.key), None);
    r.json()["breakers"].as_array().cloned().unwrap_or_default()
}
