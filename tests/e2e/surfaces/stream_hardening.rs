//! Hardening of streams and of what one isolate remembers for its tenants, end to end: a caller
//! who reads slowly is the caller's, never the provider's, and one tenant filling a per-isolate
//! table cannot push out another tenant's entries.

use crate::support::gateway::{eventually, Gateway, Resp, Tenant};
use cognigate::mock::{chunk_event, MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn breakers(t: &Tenant<'_>) -> Vec<Value> {
    t.gw.request("GET", "/v1/health", Some(&t.key), None).json()["breakers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// A streamed chat request written by hand on a raw connection, so the test decides how fast
/// the answer is read.
fn raw_stream_request(gw: &Gateway, key: &str, model: &str) -> TcpStream {
    let addr = gw.url.trim_start_matches("http://");
    let body = json!({"model": model, "stream": true,
        "messages": [{"role": "user", "content": "tell me a long story"}]})
    .to_string();
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    s
}

/// Reads what is left until the gateway ends the connection (cleanly or not).
fn read_rest(s: &mut TcpStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The upstream idle window of the provider below: its `timeout_ms`.
const IDLE_MS: u64 = 500;

#[test]
fn a_slow_reader_is_a_client_cancel_not_a_breaker_failure() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("slow-reader").unwrap();
    let t = gw.tenant("slow-reader");
    // One server failure opens this tenant's breaker.
    t.put_ok("/settings", json!({"breaker": {"error_threshold": 1}}));
    t.put_ok(
        "/providers/p",
        json!({"kind": "openai", "base_url": mock.url(), "keys": ["sk-s"], "timeout_ms": IDLE_MS}),
    );
    t.model("m", "p", 1.0, 8000);
    // A long answer the upstream sends as fast as it is read: far more than the sockets between
    // the gateway and a caller who does not read can hold (the kernel's send buffer alone may
    // grow to 4 MiB).
    let big = "x".repeat(16 * 1024);
    let mut steps: Vec<Step> = (0..768)
        .map(|_| Step::Data(chunk_event("m", &big)))
        .collect();
    steps.push(Step::Data("[DONE]".into()));
    mock.push(Rule::any(Reply::stream(steps)).times(1));

    // The caller reads one byte a second: the upstream never goes quiet, the caller does not
    // pull. It does so until the gateway lets the upstream go (or for at most 12 idle windows),
    // then catches up and reads whatever it is given.
    let upstream_let_go = || mock.calls().first().is_some_and(|c| c.client_gone);
    let mut slow = raw_stream_request(gw, &t.key, "m");
    let started = Instant::now();
    let mut byte = [0u8; 1];
    while !upstream_let_go() && started.elapsed() < Duration::from_millis(12 * IDLE_MS) {
        if !matches!(slow.read(&mut byte), Ok(1)) {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    let rest = read_rest(&mut slow);
    eventually(
        "the upstream to be let go",
        Duration::from_secs(10),
        upstream_let_go,
    );

    // The caller who meets the provider next is served: the slow read counted nothing.
    assert!(
        breakers(&t).is_empty(),
        "the slow reader opened the breaker: {:?}",
        breakers(&t)
    );
    let normal = t.chat("m");
    assert_eq!(normal.status, 200, "{}", normal.text);
    // The slow caller's stream was cut as its own cancel, not failed as the provider's.
    assert!(
        !rest.contains("upstream_stream_error") && !rest.contains("[DONE]"),
        "{}",
        rest.get(rest.len().saturating_sub(300)..)
            .unwrap_or_default()
    );
}

/// `n` requests of `one(i)` for `i` in `from..to`, eight at a time.
fn each(from: usize, to: usize, one: impl Fn(usize) + Sync) {
    std::thread::scope(|s| {
        for w in 0..8 {
            let one = &one;
            s.spawn(move || (from + w..to).step_by(8).for_each(one));
        }
    });
}

fn chat_as(t: &Tenant<'_>, body: &Value) -> Resp {
    t.gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&t.key),
        Some(&body.to_string()),
    )
}

fn budget_events(t: &Tenant<'_>) -> usize {
    let r = t.gw.admin("GET", &t.path("/events?since=0"), None);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()["data"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|e| e["event"] == "budget.exceeded")
        .count()
}

/// The budget-alert dedup table of an isolate holds 1,000 scopes in all.
const ALERT_SCOPES: usize = 1_000;

#[test]
fn one_tenant_flooding_budget_scopes_cannot_silence_or_repeat_another_tenants_budget_alert() {
    let gw = Gateway::shared();
    // Every end user of the flooding tenant is refused, each under a scope of its own.
    let (flood, _fm) = gw.tenant_with_mock("alert-flood", &["sk-f"], "failover");
    flood.put_ok(
        "/settings",
        json!({"end_user": {"budget": {"usd": 0, "period": "day"}}}),
    );
    let refuse = |i: usize| {
        let body = json!({"model": "m", "user": format!("u{i}"),
            "messages": [{"role": "user", "content": "hi"}]});
        let r = chat_as(&flood, &body);
        assert_eq!(r.status, 402, "{}", r.text);
    };
    each(0, ALERT_SCOPES, refuse);

    let (t, _m) = gw.tenant_with_mock("alert-victim", &["sk-v"], "failover");
    t.put_ok("/settings", json!({"budget": {"usd": 0, "period": "day"}}));
    assert_eq!(t.chat("m").status, 402);
    eventually(
        "the victim's budget.exceeded event",
        Duration::from_secs(10),
        || budget_events(&t) == 1,
    );
    // More of the flood, then the victim refused again: its one alert is not repeated.
    each(ALERT_SCOPES, ALERT_SCOPES + 200, refuse);
    assert_eq!(t.chat("m").status, 402);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(budget_events(&t), 1, "once per window, whatever the flood");
}

/// The prompt-cache affinity table of an isolate holds 4,096 conversations in all.
const AFFINITY_CONVERSATIONS: usize = 4_096;

/// Turn `turns` of conversation `c` under the sticky alias.
fn turn(t: &Tenant<'_>, c: usize, turns: usize) -> Resp {
    let mut messages = vec![
        json!({"role": "system", "content": format!("You are assistant {c}.")}),
        json!({"role": "user", "content": format!("Hello from conversation {c}")}),
    ];
    for i in 1..turns {
        messages.push(json!({"role": "assistant", "content": format!("answer {i}")}));
        messages.push(json!({"role": "user", "content": format!("question {i}")}));
    }
    chat_as(t, &json!({"model": "sticky", "messages": messages}))
}

fn sticky<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider) {
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1"], "failover");
    t.put_ok(
        "/aliases/sticky",
        json!({"cost_tier": "cheapest", "cache_affinity_s": 600}),
    );
    (t, mock)
}

#[test]
fn one_tenant_with_more_conversations_than_the_isolate_holds_cannot_evict_another_tenants_affinity()
{
    let gw = Gateway::shared();
    let (t, _m) = sticky(gw, "affinity-victim");
    let affinity = |r: &Resp| r.header("x-cognigate-cache-affinity").map(str::to_owned);
    assert_eq!(affinity(&turn(&t, 0, 1)).as_deref(), Some("miss"));
    assert_eq!(affinity(&turn(&t, 0, 2)).as_deref(), Some("hit"));

    let (flood, _fm) = sticky(gw, "affinity-flood");
    each(0, AFFINITY_CONVERSATIONS + 100, |c| {
        let r = turn(&flood, c, 1);
        assert_eq!(r.status, 200, "{}", r.text);
    });
    let r = turn(&t, 0, 3);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        affinity(&r).as_deref(),
        Some("hit"),
        "the victim's conversation is still remembered"
    );
}
