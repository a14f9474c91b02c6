//! Wasm memory per chat body: a body's cost stays a small multiple of its size, however it is
//! shaped. Read from `X-CogniGate-Wasm-Memory-Bytes` (DEBUG_COUNTERS), the size of the isolate's
//! linear memory: it never shrinks, so after a request it is at least that request's peak. One
//! test on a private gateway, phases in order, since each reading is the peak so far.

use crate::support::gateway::{Gateway, Resp, Tenant};
use serde_json::json;

const MIB: usize = 1024 * 1024;

fn memory(r: &Resp) -> usize {
    r.header("x-cognigate-wasm-memory-bytes")
        .expect("debug counters are on in tests")
        .parse()
        .unwrap()
}

fn post(t: &Tenant<'_>, body: &str) -> Resp {
    t.gw.request("POST", "/v1/chat/completions", Some(&t.key), Some(body))
}

/// `{"model":...,"messages":[...],"pad":[{"a":0},{"a":0},...]}` of about `size` bytes: the
/// shape that costs most per byte as a tree.
fn tiny_objects(model: &str, size: usize) -> String {
    let head =
        format!(r#"{{"model":"{model}","messages":[{{"role":"user","content":"hi"}}],"pad":["#);
    let mut body = String::with_capacity(size + 64);
    body.push_str(&head);
    while body.len() < size - 16 {
        body.push_str(r#"{"a":0},"#);
    }
    body.push_str(r#"{"a":0}]}"#);
    body
}

/// Many small messages (three values each), just under the JSON value bound (100,000 by default).
fn many_messages(model: &str, messages: usize) -> String {
    let list: Vec<_> = (0..messages)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": "x"}))
        .collect();
    json!({"model": model, "messages": list}).to_string()
}

/// A private gateway (its own isolate) with an OpenAI-compatible model `m` and an Anthropic
/// model `claude`, warmed by one small request.
struct Isolate {
    gw: &'static Gateway,
    base: usize,
}

fn isolate(hint: &str) -> (Isolate, Tenant<'static>, Vec<cognigate::mock::MockProvider>) {
    let gw: &'static Gateway = Box::leak(Box::new(Gateway::start(&[])));
    let (t, openai) = gw.tenant_with_mock(hint, &["sk-1"], "failover");
    let anthropic = cognigate::mock::MockProvider::start(hint).unwrap();
    t.put_ok(
        "/providers/ant",
        json!({"kind": "anthropic", "base_url": anthropic.url(), "keys": ["sk-ant"], "timeout_ms": 5000}),
    );
    t.put_ok(
        "/models/claude",
        json!({"provider": "ant", "upstream_model": "claude-x", "context_window": 200000}),
    );
    let base = memory(&t.chat("m")).max(memory(&t.chat("claude")));
    (Isolate { gw, base }, t, vec![openai, anthropic])
}

impl Isolate {
    /// Asserts the isolate grew by at most `multiple` times the body (or 1 MiB, if larger).
    fn check(&self, what: &str, r: &Resp, size: usize, multiple: usize) {
        let grown = memory(r).saturating_sub(self.base);
        println!(
            "{what}: body {:.2} MiB, peak wasm memory +{:.1} MiB over a warm isolate ({:.1} MiB)",
            size as f64 / MIB as f64,
            grown as f64 / MIB as f64,
            self.base as f64 / MIB as f64
        );
        assert!(
            grown <= multiple * size.max(MIB),
            "{what}: grew {grown} bytes for a {size}-byte body"
        );
        let _ = self.gw;
    }
}

#[test]
fn eight_mib_of_tiny_objects_is_refused_before_any_tree_is_built() {
    let (iso, t, _mocks) = isolate("mem-tiny");
    let body = tiny_objects("m", 8 * MIB);
    let r = post(&t, &body);
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("too_many_values"));
    iso.check("8 MiB of tiny objects (refused)", &r, body.len(), 2);
}

#[test]
fn eight_mib_of_text_to_an_openai_target_costs_at_most_three_times_its_size() {
    let (iso, t, mocks) = isolate("mem-text");
    let text = "y".repeat(2 * MIB);
    let messages: Vec<_> = (0..4)
        .map(|_| json!({"role": "user", "content": text}))
        .collect();
    let body = json!({"model": "m", "messages": messages}).to_string();
    let r = post(&t, &body);
    assert_eq!(r.status, 200, "{}", r.text);
    let sent = mocks[0].calls().last().unwrap().body.clone();
    assert_eq!(
        sent["messages"][3]["content"].as_str().unwrap().len(),
        2 * MIB
    );
    iso.check("8 MiB of text (OpenAI target)", &r, body.len(), 3);
}

#[test]
fn a_body_at_the_value_bound_to_an_openai_target_builds_no_tree() {
    let (iso, t, _mocks) = isolate("mem-values");
    let body = many_messages("m", 33_000);
    let r = post(&t, &body);
    assert_eq!(r.status, 200, "{}", r.text);
    iso.check("99k values (OpenAI target)", &r, body.len(), 3);
}

#[test]
fn a_body_at_the_value_bound_to_an_anthropic_target_stays_inside_the_stated_bound() {
    let (iso, t, _mocks) = isolate("mem-values-ant");
    let body = many_messages("claude", 33_000);
    let r = post(&t, &body);
    assert_eq!(r.status, 200, "{}", r.text);
    // Translated and written one message at a time: no tree of the conversation.
    iso.check("99k values (Anthropic target)", &r, body.len(), 6);
}

#[test]
fn eight_mib_of_text_to_an_anthropic_target_costs_at_most_three_times_its_size() {
    let (iso, t, mocks) = isolate("mem-text-ant");
    let text = "y".repeat(2 * MIB);
    let messages: Vec<_> = (0..4)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": text}))
        .collect();
    let body = json!({"model": "claude", "messages": messages}).to_string();
    let r = post(&t, &body);
    assert_eq!(r.status, 200, "{}", r.text);
    let sent = mocks[1].calls().last().unwrap().body.clone();
    assert_eq!(sent["messages"].as_array().unwrap().len(), 4);
    iso.check("8 MiB of text (Anthropic target)", &r, body.len(), 3);
}
