//! A provider's own park lengths on workerd: `max_park_ms` honours a weekly quota's
//! `Retry-After: 500000` (the deployment's `MAX_PARK_MS` caps it otherwise), and
//! `rate_limit_cooldown_ms` parks a key after a 429 without a hint.

use crate::support::gateway::{Gateway, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::{SystemTime, UNIX_EPOCH};

fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since.as_millis()).unwrap()
}

/// A tenant whose provider `p` (keys sk-1, sk-2, failover) carries `extra`, on a fresh mock.
fn tenant_with<'g>(gw: &'g Gateway, hint: &str, extra: Value) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).expect("mock");
    let t = gw.tenant(hint);
    let mut body = json!({"kind": "openai", "base_url": mock.url(), "keys": ["sk-1", "sk-2"],
        "key_strategy": "failover", "timeout_ms": 5000});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    t.put_ok("/providers/p", body);
    t.model("m", "p", 1.0, 8000);
    (t, mock)
}

/// sk-1 answers one 429 (`reply`); returns how long from now sk-1 is parked, as the tenant's
/// stats show it, after checking the next request went straight to sk-2.
fn park_sk1(t: &Tenant<'_>, mock: &MockProvider, reply: Reply) -> u64 {
    mock.push(Rule::any(reply).key("sk-1").times(1));
    let before = now_ms();
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), ["sk-1", "sk-2", "sk-2"], "sk-1 is parked");
    let sk1 = t.gw.admin("GET", &t.path("/providers/p"), None).json()["keys"][0]["id"].clone();
    let stats = t.gw.admin("GET", &t.path("/stats"), None).json();
    let parked = stats["parked_keys"].as_array().cloned().unwrap_or_default();
    assert_eq!(parked.len(), 1, "{stats}");
    assert_eq!(parked[0]["key"], sk1, "{stats}");
    parked[0]["until"].as_u64().unwrap().saturating_sub(before)
}

fn weekly() -> Reply {
    Reply::json(429, r#"{"error":{"message":"weekly quota used up"}}"#)
        .header("Retry-After", "500000")
}

fn near(got: u64, want: u64) -> bool {
    got.abs_diff(want) < 30_000
}

#[test]
fn max_park_ms_honours_a_weekly_retry_after_of_500000_s_and_the_get_shows_it() {
    let gw = Gateway::shared();
    let (t, mock) = tenant_with(gw, "weekly", json!({"max_park_ms": 604_800_000}));
    let view = gw.admin("GET", &t.path("/providers/p"), None).json();
    assert_eq!(view["max_park_ms"], 604_800_000, "{view}");
    assert_eq!(view["rate_limit_cooldown_ms"], Value::Null, "{view}");
    let parked_for = park_sk1(&t, &mock, weekly());
    assert!(near(parked_for, 500_000_000), "parked {parked_for} ms");
}

#[test]
fn without_max_park_ms_the_deployments_max_park_ms_caps_a_weekly_retry_after() {
    let gw = Gateway::shared();
    let (t, mock) = tenant_with(gw, "weekly-capped", json!({}));
    let view = gw.admin("GET", &t.path("/providers/p"), None).json();
    assert_eq!(view.get("max_park_ms"), Some(&Value::Null), "{view}");
    let parked_for = park_sk1(&t, &mock, weekly());
    assert!(near(parked_for, 3_600_000), "parked {parked_for} ms");
}

#[test]
fn rate_limit_cooldown_ms_parks_a_key_after_a_hintless_429() {
    let gw = Gateway::shared();
    let (t, mock) = tenant_with(gw, "cooldown", json!({"rate_limit_cooldown_ms": 120_000}));
    let view = gw.admin("GET", &t.path("/providers/p"), None).json();
    assert_eq!(view["rate_limit_cooldown_ms"], 120_000, "{view}");
    let hintless = Reply::json(429, r#"{"error":{"message":"slow down"}}"#);
    let parked_for = park_sk1(&t, &mock, hintless);
    assert!(near(parked_for, 120_000), "parked {parked_for} ms");
}

#[test]
fn park_lengths_are_1_s_to_7_days_and_outside_them_400_naming_the_field() {
    let gw = Gateway::shared();
    let t = gw.tenant("park-range");
    let edges = json!({"kind": "openai", "base_url": "https://api.openai.com/v1", "keys": ["sk-1"],
        "max_park_ms": 1_000, "rate_limit_cooldown_ms": 604_800_000});
    t.put_ok("/providers/p", edges);
    for (field, bad) in [
        ("max_park_ms", 999),
        ("rate_limit_cooldown_ms", 604_800_001),
    ] {
        let r = t.put(
            "/providers/p",
            json!({"kind": "openai", "base_url": "https://api.openai.com/v1", "keys": ["sk-1"], field: bad}),
        );
        assert_eq!(r.status, 400, "{}", r.text);
        assert!(r.text.contains(field), "{}", r.text);
    }
}
