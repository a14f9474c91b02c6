//! The metrics and alerts a hostile caller or a re-created tenant could abuse, end to end on
//! workerd: a model name cannot forge a Prometheus label nor crowd a configured model out of its
//! series; a webhook POST carries a timestamped signature a receiver can refuse a replay by; a
//! webhook cannot point at a local or private host; a tenant created again under a deleted
//! one's id never receives the deleted one's queued alerts.

use crate::support::gateway::{eventually, Gateway, Tenant};
use crate::support::prometheus::{scrape, value};
use crate::support::webhook::{webhook, webhook_answering, Received};
use cognigate::mock::{MockProvider, Reply, Rule};
use hmac::{Mac, SimpleHmac};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// This module's own gateway, as when each file was a test binary: a metrics scrape reads every
/// tenant's ledger and routing objects, and scraped within 10 s it must stay the size of this
/// module's tenants.
fn gateway() -> &'static Gateway {
    static GW: OnceLock<Gateway> = OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[]))
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Scrapes until the tenant's latency histogram counts `n` requests (at most 15 s).
fn scrape_counting(gw: &Gateway, tenant: &str, n: f64) -> (String, Value) {
    let start = Instant::now();
    loop {
        let (text, parsed) = scrape(gw);
        let count = value(&parsed, "cognigate_latency_ms_count", &[("tenant", tenant)]);
        if count >= n || start.elapsed() > Duration::from_secs(15) {
            assert_eq!(count, n, "{text}");
            return (text, parsed);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn a_control_character_in_a_model_name_cannot_forge_a_metrics_label_or_line() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("prom-forge", &["sk-1"], "failover");
    // `\u{1f}` once split a counted name into labels of its own: this name, refused as
    // unknown, was counted as a request `m` served. `\r` and NUL would break other readers.
    for name in ["m\u{1f}served", "x\r\ncognigate_forged 1\u{0}"] {
        assert_eq!(t.chat(name).status, 404);
    }
    let tenant = t.id.as_str();
    let (text, parsed) = scrape_counting(gw, tenant, 2.0);
    let requests = "cognigate_requests_total";
    let served = [("tenant", tenant), ("model", "m"), ("outcome", "served")];
    assert_eq!(value(&parsed, requests, &served), 0.0, "forged: {text}");
    let refused = [("tenant", tenant), ("outcome", "refused")];
    assert_eq!(value(&parsed, requests, &refused), 2.0, "{text}");
    let kept = [("tenant", tenant), ("model", "mserved")];
    assert_eq!(value(&parsed, requests, &kept), 1.0, "{text}");
    assert!(!text.contains('\r') && !text.contains('\0'), "{text:?}");
    assert!(
        !text.lines().any(|l| l.starts_with("cognigate_forged")),
        "{text}"
    );
}

#[test]
fn unknown_names_never_push_a_configured_models_series_into_other() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("prom-crowd", &["sk-1"], "failover");
    let unknown = 300;
    for i in 0..unknown {
        assert_eq!(t.chat(&format!("made-up-{i}")).status, 404);
    }
    assert_eq!(t.chat("m").status, 200);
    let tenant = t.id.as_str();
    let (text, parsed) = scrape_counting(gw, tenant, f64::from(unknown + 1));
    let requests = "cognigate_requests_total";
    let served = [("tenant", tenant), ("model", "m"), ("outcome", "served")];
    assert_eq!(value(&parsed, requests, &served), 1.0, "{text}");
    let other = [("tenant", tenant), ("model", "_other")];
    assert!(
        value(&parsed, requests, &other) > 0.0,
        "the cap still holds"
    );
    assert_eq!(
        value(&parsed, requests, &[("tenant", tenant)]),
        f64::from(unknown + 1),
        "totals stay exact"
    );
    let attempts = [("tenant", tenant), ("model", "m"), ("failure", "none")];
    let attempts_total = "cognigate_upstream_attempts_total";
    assert_eq!(value(&parsed, attempts_total, &attempts), 1.0, "{text}");
}

/// A receiver's check as the documentation gives it, written here apart from the gateway's
/// code: `X-CogniGate-Signature: t=<unix seconds>,v1=<hex>`, the `t` within 5 minutes of `now`,
/// `v1` the HMAC-SHA256 of `"<t>.<raw body>"` keyed with the whole `whsec_…` secret. The `t`
/// when the check holds.
fn receiver_accepts(secret: &str, signature: &str, body: &[u8], now: u64) -> Option<u64> {
    let mut at = None;
    let mut v1 = Vec::new();
    for part in signature.split(',') {
        match part.split_once('=') {
            Some(("t", v)) => at = v.parse::<u64>().ok(),
            Some(("v1", v)) => v1.push(v.to_owned()),
            _ => {}
        }
    }
    let at = at.filter(|t| t.abs_diff(now) <= 300)?;
    let mut mac = <SimpleHmac<sha2::Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{at}.").as_bytes());
    mac.update(body);
    let expected = hex::encode(mac.finalize().into_bytes());
    v1.contains(&expected).then_some(at)
}

fn header(headers: &[(String, String)], name: &str) -> String {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// A tenant of `gw` whose breaker on model `model` (provider `p` on `mock`) opens on one
/// failure, with a webhook for `breaker.opened` at `url`; the secret the PUT showed.
fn alerting(t: &Tenant<'_>, mock: &MockProvider, model: &str, url: &str) -> String {
    let put = t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 1}, "alerts": {"webhook_url": url, "events": ["breaker.opened"]}}),
    );
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model(model, "p", 1.0, 8000);
    put.json()["alerts"]["secret"].as_str().unwrap().to_owned()
}

fn trip(t: &Tenant<'_>, mock: &MockProvider, model: &str) {
    mock.push(Rule::any(Reply::status(503)).model(model).times(1));
    assert_eq!(t.chat(model).status, 502);
}

/// One POST a receiver kept: its headers and raw body.
type Post = (Vec<(String, String)>, Vec<u8>);

fn posts(got: &Received) -> Vec<Post> {
    got.lock().unwrap().clone()
}

#[test]
fn each_webhook_attempt_is_signed_with_its_own_timestamp_and_the_same_event_id() {
    let gw = gateway();
    let (url, got) = webhook_answering("500 Internal Server Error", String::new());
    let mock = MockProvider::start("signed").unwrap();
    let t = gw.tenant("signed");
    let secret = alerting(&t, &mock, "m", &url);
    trip(&t, &mock, "m");
    // The first POST fails; its retry comes 10 s later.
    eventually(
        "the first POST and its retry",
        Duration::from_secs(30),
        || posts(&got).len() >= 2,
    );
    let tries = posts(&got);
    let signed: Vec<(u64, String)> = tries
        .iter()
        .map(|(headers, body)| {
            let sig = header(headers, "x-cognigate-signature");
            let t = receiver_accepts(&secret, &sig, body, now_s())
                .unwrap_or_else(|| panic!("a receiver's check within 5 minutes refused {sig:?}"));
            // The same POST replayed an hour later fails the same check.
            assert_eq!(receiver_accepts(&secret, &sig, body, t + 3_600), None);
            (t, header(headers, "x-cognigate-event-id"))
        })
        .collect();
    let (first, second) = (&signed[0], &signed[1]);
    assert!(first.1.starts_with("evt_"), "{first:?}");
    assert_eq!(first.1, second.1, "the same event id on every retry");
    assert!(
        second.0 >= first.0 + 9,
        "re-signed when retried: {signed:?}"
    );
    assert_eq!(tries[0].1, tries[1].1, "the same body");
}

#[test]
fn a_webhook_on_a_local_or_private_host_is_refused_unless_the_deployment_allows_it() {
    let gw = Gateway::start(&[("ALLOW_HTTP_UPSTREAMS", "false")]);
    let t = gw.tenant("private-hook");
    let hook = |url: &str| t.put("/settings", json!({"alerts": {"webhook_url": url}}));
    for url in [
        "https://127.0.0.1/hook",
        "https://localhost/x",
        "https://api.localhost/x",
        "https://10.0.0.1/",
        "https://172.16.5.4/",
        "https://192.168.0.10/",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/",
        "https://[fd00::1]/",
        "https://[fe80::1]/",
        "https://[::ffff:127.0.0.1]/",
        "https://0.0.0.0/",
        "https://2130706433/",
        "https://0x7f.1/",
    ] {
        let r = hook(url);
        assert_eq!(r.status, 400, "{url}: {}", r.text);
        assert_eq!(r.json()["error"]["param"], "alerts.webhook_url", "{url}");
        assert!(r.text.contains("private"), "{url}: {}", r.text);
    }
    let settings = t.gw.admin("GET", &t.path("/settings"), None).json();
    assert_eq!(
        settings["alerts"],
        Value::Null,
        "nothing stored: {settings}"
    );
    // A public host is accepted. No event can fire for this tenant (no provider, no budget),
    // and the tenant is deleted at once: nothing is ever sent to it.
    let r = hook("https://hooks.example.com/x");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(t.gw.admin("DELETE", &t.path(""), None).status, 200);
}

#[test]
fn a_tenant_created_again_never_receives_the_deleted_tenants_queued_alerts() {
    let gw = gateway();
    let (failing, old_got) = webhook_answering("503 Service Unavailable", String::new());
    let mock = MockProvider::start("regen").unwrap();
    let old = gw.tenant("regen");
    alerting(&old, &mock, "m-old", &failing);
    trip(&old, &mock, "m-old");
    // Its first POST fails: the event waits in the outbox for its retry, 10 s later.
    eventually("the first POST", Duration::from_secs(10), || {
        !posts(&old_got).is_empty()
    });
    let failed_at = Instant::now();
    let new = old.recreated();
    let (url, new_got) = webhook();
    alerting(&new, &mock, "m-new", &url);
    // Past the old event's retry, the new tenant's own event: delivered, and alone.
    let retry = Duration::from_secs(12);
    std::thread::sleep(retry.saturating_sub(failed_at.elapsed()));
    trip(&new, &mock, "m-new");
    eventually("the new tenant's alert", Duration::from_secs(10), || {
        !posts(&new_got).is_empty()
    });
    std::thread::sleep(Duration::from_secs(2));
    let models: Vec<String> = posts(&new_got)
        .iter()
        .map(|(_, body)| {
            let event: Value = serde_json::from_slice(body).unwrap();
            event["model"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(models, ["m-new"], "only the new tenant's own event");
    assert_eq!(
        posts(&old_got).len(),
        1,
        "the deleted tenant's event is dropped, not retried"
    );
}
