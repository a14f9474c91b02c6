//! Hardening of streams, end to end: a caller who reads slowly is the caller's, never the
//! provider's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use cognigate::mock::{chunk_event, MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use support::gateway::{eventually, Gateway, Tenant};

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
