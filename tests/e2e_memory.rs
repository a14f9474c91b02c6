//! Wasm memory per chat body: a body's cost stays a small multiple of its size, however it is
//! shaped. Read from `X-CogniGate-Wasm-Memory-Bytes` (DEBUG_COUNTERS), the size of the isolate's
//! linear memory: it never shrinks, so after a request it is at least that request's peak. One
//! test on a private gateway, phases in order, since each reading is the peak so far.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use support::gateway::{Gateway, Resp, Tenant};

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

/// Many small messages, just under the JSON value bound (100,000 by default).
fn many_messages(model: &str, messages: usize) -> String {
    let list: Vec<_> = (0..messages)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": "x"}))
        .collect();
    json!({"model": model, "messages": list}).to_string()
}

#[test]
fn a_chat_bodys_peak_wasm_memory_is_a_small_multiple_of_its_size_whatever_its_shape() {
    let gw = Gateway::start(&[]);
    let (t, openai) = gw.tenant_with_mock("memory", &["sk-1"], "failover");
    let anthropic = cognigate::mock::MockProvider::start("memory-ant").unwrap();
    let r = t.put(
        "/providers/ant",
        json!({"kind": "anthropic", "base_url": anthropic.url(), "keys": ["sk-ant"], "timeout_ms": 5000}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let r = t.put(
        "/models/claude",
        json!({"provider": "ant", "upstream_model": "claude-x", "context_window": 200000}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let base = memory(&t.chat("m"));
    let mut report = vec![format!("baseline {:.1} MiB", base as f64 / MIB as f64)];
    let mut check = |what: &str, r: &Resp, size: usize, multiple: usize| {
        let grown = memory(r).saturating_sub(base);
        report.push(format!(
            "{what}: body {:.2} MiB, wasm memory +{:.1} MiB",
            size as f64 / MIB as f64,
            grown as f64 / MIB as f64
        ));
        assert!(
            grown <= multiple * size.max(MIB),
            "{what}: grew {grown} bytes for a {size}-byte body\n{}",
            report.join("\n")
        );
    };

    // 8 MiB of tiny objects: about two million values, refused before any tree is built.
    let body = tiny_objects("m", 8 * MIB);
    let r = post(&t, &body);
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("too_many_values"));
    check("8 MiB of tiny objects (refused)", &r, body.len(), 2);

    // 8 MiB of text in four messages, served through an OpenAI-compatible target.
    let text = "y".repeat(2 * MIB);
    let body = json!({"model": "m", "messages": (0..4).map(|_| json!({"role": "user", "content": text})).collect::<Vec<_>>()}).to_string();
    let r = post(&t, &body);
    assert_eq!(r.status, 200, "{}", r.text);
    let sent = openai.calls().last().unwrap().body.clone();
    assert_eq!(
        sent["messages"][3]["content"].as_str().unwrap().len(),
        2 * MIB
    );
    check("8 MiB of text (OpenAI target)", &r, body.len(), 3);

    // Just under the value bound, served through both kinds of target: the Anthropic
    // translation builds a tree, bounded by the value count.
    let body = many_messages("m", 49_000);
    let r = post(&t, &body);
    assert_eq!(r.status, 200, "{}", r.text);
    check("98k values (OpenAI target)", &r, body.len(), 3);
    let body = many_messages("claude", 49_000);
    let r = post(&t, &body);
    assert_eq!(r.status, 200, "{}", r.text);
    check("98k values (Anthropic target)", &r, body.len(), 40);
    println!("{}", report.join("\n"));
}
