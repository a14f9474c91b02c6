//! Streaming through the cascade: failover before the first byte, one clean error after it.

use crate::support::gateway::{Gateway, Tenant};
use cognigate::mock::{chunk_event, Gate, MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

fn stream_body(model: &str) -> String {
    json!({"model": model, "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "hi"}]})
    .to_string()
}

/// Starts a streamed request and hands back its status, headers and a channel of body chunks.
fn open_stream(t: &Tenant<'_>, model: &str) -> (u16, Vec<(String, String)>, Receiver<Vec<u8>>) {
    t.open_stream(&stream_body(model))
}

fn read_all(rx: &Receiver<Vec<u8>>) -> String {
    let mut out = Vec::new();
    while let Ok(chunk) = rx.recv_timeout(Duration::from_secs(15)) {
        out.extend(chunk);
    }
    String::from_utf8(out).unwrap()
}

fn data_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn breakers(t: &Tenant<'_>) -> Vec<Value> {
    t.gw.request("GET", "/v1/health", Some(&t.key), None).json()["breakers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn setup<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider, MockProvider) {
    let a = MockProvider::start(hint).unwrap();
    let b = MockProvider::start("second").unwrap();
    let t = gw.tenant(hint);
    t.provider("a", &a.url(), &["sk-a"], "failover");
    t.provider("b", &b.url(), &["sk-b"], "failover");
    t.model("first", "a", 1.0, 8000);
    t.model("second", "b", 1.0, 8000);
    t.rule("chain", &["first", "second"]);
    (t, a, b)
}

#[test]
fn a_stream_arrives_chunk_by_chunk_before_the_upstream_has_sent_the_last_one() {
    let gw = Gateway::shared();
    let (t, a, _) = setup(gw, "chunky");
    let gate = Gate::default();
    a.push(Rule::any(Reply::stream(vec![
        Step::Data(chunk_event("first", "Hello")),
        Step::Wait(gate.clone()),
        Step::Data(chunk_event("first", " world")),
        Step::Data("[DONE]".into()),
    ])));
    let (status, headers, rx) = open_stream(&t, "chain");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "x-cognigate-model"), Some("first"));
    assert_eq!(header(&headers, "x-cognigate-fallback-depth"), Some("0"));
    assert!(header(&headers, "content-type")
        .unwrap()
        .starts_with("text/event-stream"));
    // The mock is holding back the rest: this first chunk can only come from a relay that does
    // not buffer.
    let first = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("first chunk while upstream waits");
    assert!(String::from_utf8_lossy(&first).contains("Hello"));
    gate.open();
    let rest = read_all(&rx);
    let lines = data_lines(&format!("{}{rest}", String::from_utf8_lossy(&first)));
    assert_eq!(lines.last().map(String::as_str), Some("[DONE]"));
    assert!(rest.contains("world"));
    // stream_options went upstream as sent.
    assert_eq!(
        a.calls()[0].body["stream_options"],
        json!({"include_usage": true})
    );
}

#[test]
fn first_candidate_503_then_the_second_streams_at_depth_1() {
    let gw = Gateway::shared();
    let (t, a, b) = setup(gw, "s503");
    a.push(Rule::any(Reply::status(503)));
    let (status, headers, rx) = open_stream(&t, "chain");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "x-cognigate-fallback-depth"), Some("1"));
    assert_eq!(header(&headers, "x-cognigate-model"), Some("second"));
    let text = read_all(&rx);
    assert_eq!(data_lines(&text).last().map(String::as_str), Some("[DONE]"));
    assert_eq!((a.count(), b.count()), (1, 1));
}

#[test]
fn a_200_stream_whose_first_event_is_an_error_fails_over() {
    let gw = Gateway::shared();
    let (t, a, b) = setup(gw, "firsterr");
    a.push(Rule::any(Reply::stream(vec![
        Step::Raw(": warming up\n\n".into()),
        Step::Data(r#"{"error":{"message":"model overloaded","type":"server_error"}}"#.into()),
    ])));
    let (status, headers, rx) = open_stream(&t, "chain");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "x-cognigate-model"), Some("second"));
    let text = read_all(&rx);
    assert!(
        !text.contains("overloaded"),
        "nothing of the failed candidate reached the caller"
    );
    assert_eq!(data_lines(&text).last().map(String::as_str), Some("[DONE]"));
    assert_eq!(b.count(), 1);
}

#[test]
fn a_stream_that_closes_before_any_event_fails_over() {
    let gw = Gateway::shared();
    let (t, a, b) = setup(gw, "empty");
    a.push(Rule::any(Reply::stream(vec![Step::Cut])));
    let (status, headers, rx) = open_stream(&t, "chain");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "x-cognigate-model"), Some("second"));
    read_all(&rx);
    assert_eq!((a.count(), b.count()), (1, 1));
}

#[test]
fn a_stream_cut_after_two_chunks_ends_with_one_error_event_and_counts_toward_the_breaker() {
    let gw = Gateway::shared();
    let (t, a, _) = setup(gw, "cut");
    assert_eq!(
        t.put("/settings", json!({"breaker": {"error_threshold": 2}}))
            .status,
        200
    );
    // One ordinary failure first: the cut stream below is the second, which opens the breaker.
    a.push(Rule::any(Reply::status(500)).times(1));
    assert_eq!(t.chat("first").status, 502);
    assert!(breakers(&t).is_empty());
    a.push(Rule::any(Reply::stream(vec![
        Step::Data(chunk_event("first", "one")),
        Step::Data(chunk_event("first", "two")),
        Step::Cut,
    ])));
    let (status, _, rx) = open_stream(&t, "first");
    assert_eq!(status, 200);
    let text = read_all(&rx);
    let lines = data_lines(&text);
    assert_eq!(lines.len(), 3, "{text}");
    assert!(!lines.iter().any(|l| l == "[DONE]"));
    let last: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(last["error"]["type"], "api_error");
    assert_eq!(last["error"]["code"], "upstream_stream_error");
    let start = Instant::now();
    while breakers(&t).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the cut stream was not counted"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(breakers(&t)[0]["model"], "first");
    assert!(gw
        .log_containing("stream failed after the first byte")
        .contains("stream failed after the first byte"));
}

#[test]
fn an_upstream_error_event_mid_stream_becomes_the_gateways_error_event() {
    let gw = Gateway::shared();
    let (t, a, _) = setup(gw, "miderr");
    a.push(Rule::any(Reply::stream(vec![
        Step::Data(chunk_event("first", "partial")),
        Step::Data(r#"{"error":{"message":"internal detail 10.1.2.3"}}"#.into()),
        Step::Data(chunk_event("first", "never forwarded")),
        Step::Data("[DONE]".into()),
    ])));
    let (_, _, rx) = open_stream(&t, "first");
    let text = read_all(&rx);
    assert!(text.contains("partial") && text.contains("upstream_stream_error"));
    assert!(
        !text.contains("10.1.2.3") && !text.contains("never forwarded") && !text.contains("[DONE]")
    );
}

#[test]
fn a_caller_that_disconnects_mid_stream_cancels_the_upstream_and_leaves_the_breaker_alone() {
    let gw = Gateway::shared();
    let (t, a, _) = setup(gw, "disconnect");
    assert_eq!(
        t.put("/settings", json!({"breaker": {"error_threshold": 2}}))
            .status,
        200
    );
    for _ in 0..3 {
        let mut steps = vec![Step::Data(chunk_event("first", "start"))];
        for _ in 0..100 {
            steps.push(Step::Sleep(50));
            steps.push(Step::Data(chunk_event("first", "more")));
        }
        steps.push(Step::Data("[DONE]".into()));
        a.push(Rule::any(Reply::stream(steps)).times(1));
        let (status, _, rx) = open_stream(&t, "first");
        assert_eq!(status, 200);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("first chunk");
        drop(rx); // the reader thread stops and drops the connection
    }
    let start = Instant::now();
    while !a.calls().iter().all(|c| c.client_gone) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the upstream reads were not cancelled: {:?}",
            a.calls().iter().map(|c| c.client_gone).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(breakers(&t).is_empty(), "{:?}", breakers(&t));
    assert_eq!(t.chat("first").status, 200);
}

#[test]
fn the_official_openai_client_reads_a_gateway_stream_to_the_end() {
    let gw = Gateway::shared();
    let (t, a, _) = setup(gw, "sdk");
    let mut steps: Vec<Step> = ["The ", "quick ", "brown ", "fox."]
        .iter()
        .map(|w| Step::Data(chunk_event("first", w)))
        .collect();
    steps.push(Step::Data(
        json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": "first",
            "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}})
        .to_string(),
    ));
    steps.push(Step::Data("[DONE]".into()));
    a.push(Rule::any(Reply::stream(steps)));
    let line = gw.openai_sdk_stream(&t.key, "chain");
    assert_eq!(line["ok"], true, "{line}");
    assert_eq!(line["text"], "The quick brown fox.");
    assert_eq!(line["usage"]["total_tokens"], 7);
    assert_eq!(a.calls()[0].body["stream_options"]["include_usage"], true);
}

#[test]
fn a_stream_that_goes_quiet_longer_than_timeout_ms_ends_with_the_error_event() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("quiet").unwrap();
    let t = gw.tenant("quiet");
    let r = t.put(
        "/providers/p",
        json!({"kind": "openai", "base_url": mock.url(), "keys": ["sk-q"], "timeout_ms": 300}),
    );
    assert_eq!(r.status, 200);
    t.model("m", "p", 1.0, 8000);
    // Steady chunks 150 ms apart outlast the 300 ms idle limit in total, but never go quiet...
    let mut steady = vec![Step::Data(chunk_event("m", "0"))];
    for i in 1..10 {
        steady.push(Step::Sleep(150));
        steady.push(Step::Data(chunk_event("m", &i.to_string())));
    }
    steady.push(Step::Data("[DONE]".into()));
    mock.push(Rule::any(Reply::stream(steady)).times(1));
    let (_, _, rx) = open_stream(&t, "m");
    let text = read_all(&rx);
    assert_eq!(
        data_lines(&text).last().map(String::as_str),
        Some("[DONE]"),
        "{text}"
    );
    // ...while one gap of a second does.
    mock.push(Rule::any(Reply::stream(vec![
        Step::Data(chunk_event("m", "before")),
        Step::Sleep(1_000),
        Step::Data(chunk_event("m", "late-chunk")),
        Step::Data("[DONE]".into()),
    ])));
    let (_, _, rx) = open_stream(&t, "m");
    let text = read_all(&rx);
    assert!(
        text.contains("before") && !text.contains("late-chunk"),
        "{text}"
    );
    assert!(
        text.contains("upstream_stream_error") && !text.contains("[DONE]"),
        "{text}"
    );
}
