//! What the gateway sends upstream and how long it listens: redirects never followed, https only
//! unless the deployment allows http, bounded error and success bodies, and only `PROVIDER_*`
//! Worker secrets usable as keys.

use crate::support::gateway::{Gateway, Resp, Tenant, SECRET_NAME};
use cognigate::mock::{Body, Gate, MockProvider, Reply, Rule, Step};
use serde_json::json;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A gateway deployed without `ALLOW_HTTP_UPSTREAMS` (the production default).
fn https_only() -> &'static Gateway {
    static GW: OnceLock<Gateway> = OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[("ALLOW_HTTP_UPSTREAMS", "false")]))
}

/// The `failure` of each attempt in the log line of request `r` ("served" for the one that was).
fn logged_failures(gw: &Gateway, r: &Resp) -> Vec<String> {
    let id = r.header("x-cognigate-request-id").unwrap().to_owned();
    gw.request_line(&id)["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["failure"].as_str().unwrap_or("served").to_owned())
        .collect()
}

/// A tenant with provider `bad` (on `bad_mock`, this `timeout_ms`) serving model `first`, provider
/// `good` serving model `second`, and the rule `chain` = [first, second].
fn chain_after<'g>(
    gw: &'g Gateway,
    hint: &str,
    bad_mock: &MockProvider,
    timeout_ms: u32,
    good_mock: &MockProvider,
) -> Tenant<'g> {
    let t = gw.tenant(hint);
    t.put_ok(
        "/providers/bad",
        json!({"kind": "openai", "base_url": bad_mock.url(), "keys": ["sk-bad"], "timeout_ms": timeout_ms}),
    );
    t.provider("good", &good_mock.url(), &["sk-good"], "failover");
    t.model("first", "bad", 1.0, 8000);
    t.model("second", "good", 1.0, 8000);
    assert_eq!(t.rule("chain", &["first", "second"]).status, 200);
    t
}

#[test]
fn a_redirect_is_the_candidates_server_failure_and_the_location_host_receives_nothing() {
    let gw = Gateway::shared();
    let redirecting = MockProvider::start("redirecting").unwrap();
    let location = MockProvider::start("location").unwrap();
    let good = MockProvider::start("good").unwrap();
    let t = chain_after(gw, "redirect", &redirecting, 5000, &good);
    for status in [302, 307] {
        redirecting.clear();
        redirecting.push(Rule::any(
            Reply::status(status)
                .header("location", &format!("{}/chat/completions", location.url())),
        ));
        let r = t.chat("first");
        assert_eq!(r.status, 502, "{status}: {}", r.text);
        assert_eq!(
            r.json()["error"]["attempts"],
            json!([{"provider": "bad", "model": "first", "failure": "server", "status": status}])
        );
        assert_eq!(redirecting.keys(), ["sk-bad"]);
    }
    let r = t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("second"));
    assert_eq!(location.count(), 0, "the Location host received nothing");
}

/// Sends the chain, times it, then releases the gate; the second candidate must have served.
fn served_after_the_scripted_candidate(t: &Tenant<'_>, gate: &Gate) -> (Resp, Duration) {
    let started = Instant::now();
    let r = t.chat("chain");
    let took = started.elapsed();
    gate.open();
    assert_eq!(r.status, 200, "{}", r.text);
    (r, took)
}

/// A chain whose first candidate (this timeout) the test scripts, then a good one; the gate
/// releases whatever the script holds back.
fn scripted_then_good(
    hint: &str,
    timeout_ms: u32,
) -> (Tenant<'static>, MockProvider, MockProvider, Gate) {
    let (scripted, good) = (
        MockProvider::start(hint).unwrap(),
        MockProvider::start("good").unwrap(),
    );
    let t = chain_after(Gateway::shared(), hint, &scripted, timeout_ms, &good);
    (t, scripted, good, Gate::default())
}

#[test]
fn a_stalled_error_body_is_the_candidates_timeout_and_the_cascade_moves_on_within_timeout_ms() {
    let (t, stalling, _good, gate) = scripted_then_good("stall", 1000);
    let gw = t.gw;
    // Headers at once, a few bytes of body, then nothing until the gate opens (30 s at most).
    stalling.push(Rule::any(Reply {
        status: 500,
        body: Body::Stream(vec![
            Step::Raw(r#"{"error":"#.into()),
            Step::Wait(gate.clone()),
        ]),
        ..Reply::default()
    }));
    let (r, took) = served_after_the_scripted_candidate(&t, &gate);
    assert_eq!(r.header("x-cognigate-model"), Some("second"));
    assert!(
        took < Duration::from_millis(2500),
        "a 1000 ms timeout bounds the body read too, took {took:?}"
    );
    assert_eq!(logged_failures(gw, &r), ["timeout", "served"]);
}

#[test]
fn an_error_body_is_read_only_to_64_kib_and_the_rest_is_never_waited_for() {
    let (t, flooding, _good, gate) = scripted_then_good("flood", 10_000);
    let gw = t.gw;
    // 96 KiB of body, then a stall: only a reader that stops at 64 KiB gets past it in time.
    let chunk = "x".repeat(16 * 1024);
    let mut steps: Vec<Step> = (0..6).map(|_| Step::Raw(chunk.clone())).collect();
    steps.push(Step::Wait(gate.clone()));
    flooding.push(Rule::any(Reply {
        status: 503,
        body: Body::Stream(steps),
        ..Reply::default()
    }));
    let (r, took) = served_after_the_scripted_candidate(&t, &gate);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(logged_failures(gw, &r), ["server", "served"]);
}

#[test]
fn a_non_streamed_answer_over_16_mib_is_the_candidates_oversized_failure() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("huge", &["sk-1"], "failover");
    let content = "a".repeat(17 * 1024 * 1024);
    mock.push(Rule::any(Reply::json(
        200,
        &cognigate::mock::completion_body("m", &content),
    )));
    let r = t.chat("m");
    assert_eq!(r.status, 502, "{:.300}", r.text);
    assert_eq!(
        r.json()["error"]["attempts"],
        json!([{"provider": "p", "model": "m", "failure": "oversized", "status": 200}])
    );
}

#[test]
fn without_allow_http_upstreams_an_http_base_url_is_refused_with_param_base_url() {
    let gw = https_only();
    let t = gw.tenant("httpsonly");
    let put = |url: &str| {
        t.put(
            "/providers/p",
            json!({"kind": "openai", "base_url": url, "keys": ["sk-1"]}),
        )
    };
    for bad in [
        "http://127.0.0.1:11434/v1",
        "https://h:99999/v1",
        "https://[::1",
        "https://user:pw@api.example.com/v1",
        "https://api.example.com/v1?x=1",
        "https://api.example.com/v1#f",
    ] {
        let r = put(bad);
        assert_eq!(r.status, 400, "{bad}: {}", r.text);
        assert_eq!(r.json()["error"]["param"], "base_url", "{bad}: {}", r.text);
    }
    assert_eq!(
        gw.admin("GET", &t.path("/providers"), None).json()["data"],
        json!([])
    );
    let r = put("https://api.example.com/v1/");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json()["base_url"], "https://api.example.com/v1");
}

#[test]
fn without_allow_http_upstreams_a_stored_http_provider_is_left_out_of_routing_and_logged() {
    let gw = https_only();
    let mock = MockProvider::start("stored-http").unwrap();
    let t = gw.tenant("storedhttp");
    t.put_ok(
        "/providers/p",
        json!({"kind": "openai", "base_url": "https://placeholder.example/v1", "keys": ["sk-1"]}),
    );
    t.model("m", "p", 1.0, 8000);
    // As a row written while the deployment allowed http (or before the rule) would be.
    let spec = gw.sql(
        "SELECT spec FROM providers WHERE tenant_id = ?1 AND name = 'p'",
        &[json!(t.id)],
    )[0]["spec"]
        .as_str()
        .unwrap()
        .replace("https://placeholder.example/v1", &mock.url());
    gw.sql(
        "UPDATE providers SET spec = ?2 WHERE tenant_id = ?1 AND name = 'p'",
        &[json!(t.id), json!(spec)],
    );
    let r = t.chat("m");
    assert_eq!(r.status, 503, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("no_candidates"));
    assert_eq!(mock.count(), 0, "the key never travelled over plain http");
    let log = gw.log_containing("provider left out of routing");
    assert!(
        log.lines()
            .any(|l| l.contains("provider left out of routing") && l.contains(&t.id)),
        "{log}"
    );
}

#[test]
fn only_worker_secrets_named_provider_star_can_be_referenced_as_keys() {
    let gw = Gateway::shared();
    let t = gw.tenant("secretprefix");
    let put = |secret: &str| {
        t.put(
            "/providers/p",
            json!({"kind": "openai", "base_url": "https://api.example.com/v1", "keys": [{"secret": secret}]}),
        )
    };
    for name in ["OPENAI_API_KEY", "CG_ADMIN", "CG_KEK", "DEBUG_COUNTERS"] {
        let r = put(name);
        assert_eq!(r.status, 400, "{name}: {}", r.text);
        assert_eq!(r.json()["error"]["param"], "keys", "{name}: {}", r.text);
    }
    assert_eq!(put(SECRET_NAME).status, 200);
}
