//! The response cache, hardened against a hostile caller and stale scope: a body passes its size,
//! depth and value limits before the cache reads it; a cached answer never crosses a key's
//! allow-list, a route that differs by `stream`, or a tenant's re-creation; a tenant can forbid
//! the cache; a stored answer the gateway cannot read is a miss, never a panic.

use crate::support::gateway::{agent, eventually, header_list, Gateway, Resp, Tenant};
use crate::support::response_cache::*;
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const TTL_60: (&str, &str) = ("x-cognigate-cache-ttl", "60");

/// POST a body as these exact bytes (a deep body cannot go through a `serde_json::Value`).
fn post_raw(gw: &Gateway, key: &str, body: String, headers: &[(&str, &str)]) -> Resp {
    let mut req = ureq::http::Request::builder()
        .method("POST")
        .uri(format!("{}/v1/chat/completions", gw.url))
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {key}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    match agent().run(req.body(body).unwrap()) {
        Ok(mut resp) => Resp {
            status: resp.status().as_u16(),
            headers: header_list(&resp),
            text: resp.body_mut().read_to_string().unwrap_or_default(),
        },
        // No answer at all (the runtime cut the request, or the socket): never a 4xx.
        Err(e) => Resp {
            status: 0,
            headers: Vec::new(),
            text: e.to_string(),
        },
    }
}

/// A valid chat body whose `pad` field is `pad` (raw JSON text).
fn padded(pad: &str) -> String {
    format!(r#"{{"model":"m","messages":[{{"role":"user","content":"x"}}],"pad":{pad}}}"#)
}

fn deep(levels: usize) -> String {
    padded(&format!("{}{}", "[".repeat(levels), "]".repeat(levels)))
}

/// About `bytes` of `[0,0,...]`: millions of values, under the 10 MiB size limit.
fn wide(bytes: usize) -> String {
    let mut pad = String::with_capacity(bytes + 2);
    pad.push('[');
    pad.push('0');
    while pad.len() < bytes {
        pad.push_str(",0");
    }
    pad.push(']');
    padded(&pad)
}

struct Stop<'a>(&'a AtomicBool);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

#[test]
fn a_deep_or_wide_body_with_the_cache_header_gets_the_same_4xx_as_without_it_and_no_other_tenant_loses_a_request_or_its_usage(
) {
    // A gateway of its own: on a worker that fails this rule the isolate is lost.
    let gw = Gateway::start(&[]);
    let (victim, _victim_mock) = gw.tenant_with_mock("victim", &["sk-1"], "round_robin");
    let (hostile, _hostile_mock) = gw.tenant_with_mock("hostile", &["sk-1"], "round_robin");
    let mut served_before = 0u64;
    for _ in 0..5 {
        assert_eq!(victim.chat("m").status, 200);
        served_before += 1;
    }
    let bodies = [
        ("5,000 deep", deep(5_000)),
        ("100,000 deep", deep(100_000)),
        ("9 MiB wide", wide(9 << 20)),
    ];
    let attacking = AtomicBool::new(true);
    let (served_during, lost) = std::thread::scope(|s| {
        let other = s.spawn(|| {
            let (mut served, mut lost) = (0u64, Vec::new());
            while attacking.load(Ordering::SeqCst) {
                let r = victim.chat("m");
                if r.status == 200 {
                    served += 1;
                } else {
                    lost.push(format!("{} {}", r.status, r.text));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            (served, lost)
        });
        // The other tenant stops when the attack ends, a failed assertion included.
        let _stop = Stop(&attacking);
        for (what, body) in &bodies {
            let plain = post_raw(&gw, &hostile.key, body.clone(), &[]);
            assert!(
                (400..500).contains(&plain.status),
                "{what} without the header: {} {}",
                plain.status,
                plain.text
            );
            let cached = post_raw(&gw, &hostile.key, body.clone(), &[TTL_60]);
            assert_eq!(
                (cached.status, cached.error_code()),
                (plain.status, plain.error_code()),
                "{what} with the cache header: the same answer as without it: {}",
                cached.text
            );
        }
        drop(_stop);
        other.join().unwrap()
    });
    assert!(lost.is_empty(), "the other tenant lost requests: {lost:?}");
    assert!(served_during > 0, "the other tenant ran during the attack");
    let want = served_before + served_during;
    let mut usage = Value::Null;
    eventually("every served request in the usage API", SETTLED * 3, || {
        usage = victim.usage("model");
        usage["total"]["requests"] == want
    });
}

/// A tenant with models m1 ($0.5, the cheapest), m ($1) and m2 ($2) on one mock, exploration
/// off, the cache on.
fn two_models(hint: &str) -> (Tenant<'static>, MockProvider) {
    let (t, mock) = cached(hint, json!({"ttl_s": 300}));
    t.model("m1", "p", 0.5, 8000);
    t.model("m2", "p", 2.0, 8000);
    t.put_ok(
        "/settings",
        json!({"exploration_share": 0, "cache": {"ttl_s": 300}}),
    );
    (t, mock)
}

#[test]
fn a_cached_answer_never_reaches_a_key_whose_allow_list_forbids_the_model_that_produced_it() {
    let (t, mock) = two_models("cache-scope-auto");
    let body = chat_body("hello", 0.2);
    let mut cheap = body.clone();
    cheap["model"] = json!("auto:cheap");
    let first = post(&t, &cheap, &[]);
    assert_eq!(first.header("x-cognigate-model"), Some("m1"));
    stored(&t, &first);
    let (_, scoped) = t.key_with(json!({"models": ["auto:cheap", "m2"]}));
    let r = t.gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&scoped),
        Some(&cheap.to_string()),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (r.header("x-cognigate-model"), r.header("x-cognigate-cache")),
        (Some("m2"), Some("miss")),
        "m1's answer is not this key's to see"
    );
    assert_eq!(mock.count(), 2);
    // A key of the same scope as the first still shares its entry.
    let (_, open) = t.key_with(json!({}));
    let again = t.gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&open),
        Some(&cheap.to_string()),
    );
    assert_eq!(again.header("x-cognigate-cache"), Some("hit"));
    assert_eq!(again.header("x-cognigate-model"), Some("m1"));
}

#[test]
fn a_tenants_max_ttl_s_of_0_turns_the_cache_off_whatever_the_request_header_says() {
    let (t, mock) = cached("cache-forbidden", Value::Null);
    let r = t.put("/settings", json!({"cache": {"max_ttl_s": 0}}));
    assert_eq!(r.status, 200, "max_ttl_s 0 is the tenant's no: {}", r.text);
    let body = chat_body("hello", 0.2);
    for _ in 0..2 {
        let r = post(&t, &body, &[TTL_60]);
        assert_eq!(r.header("x-cognigate-cache"), None, "off: {:?}", r.headers);
    }
    assert_eq!(mock.count(), 2, "both answered upstream");
    let r = t.put("/settings", json!({"cache": {"ttl_s": 5, "max_ttl_s": 0}}));
    assert_eq!(r.status, 400, "a ttl above the cap: {}", r.text);
}

#[test]
fn a_streamed_request_never_gets_the_answer_a_plain_one_got_by_another_route() {
    let (t, mock) = two_models("cache-stream-route");
    t.put_ok(
        "/routing-rules",
        json!({"name": "streams", "match": "best", "when": {"params.stream": true}, "chain": ["m2"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "plain", "match": "best", "priority": 10, "chain": ["m1"]}),
    );
    let mut body = chat_body("hello", 0.2);
    body["model"] = json!("best");
    let plain = post(&t, &body, &[]);
    assert_eq!(plain.header("x-cognigate-model"), Some("m1"));
    stored(&t, &plain);
    body["stream"] = json!(true);
    let streamed = post(&t, &body, &[]);
    assert_eq!(
        (
            streamed.header("x-cognigate-model"),
            streamed.header("x-cognigate-cache")
        ),
        (Some("m2"), Some("miss")),
        "the stream's own route: {}",
        streamed.text
    );
    assert_eq!(mock.count(), 2);
}

#[test]
fn a_tenant_deleted_and_created_again_under_its_id_never_gets_the_old_tenants_cached_answers() {
    let (t, _mock) = cached("cache-regen", json!({"ttl_s": 300}));
    let body = chat_body("hello", 0.2);
    stored(&t, &post(&t, &body, &[]));
    assert_eq!(
        post(&t, &body, &[]).header("x-cognigate-cache"),
        Some("hit")
    );
    let again = t.recreated();
    let mock = MockProvider::start("cache-regen-again").unwrap();
    again.provider("p", &mock.url(), &["sk-1"], "round_robin");
    again.model("m", "p", 1.0, 8000);
    again.put_ok("/settings", json!({"cache": {"ttl_s": 300}}));
    let r = post(&again, &body, &[]);
    assert_eq!(
        r.header("x-cognigate-cache"),
        Some("miss"),
        "the new tenant starts clean: {}",
        r.text
    );
    assert_eq!(mock.count(), 1, "answered by the new tenant's provider");
}

#[test]
fn a_stored_answer_whose_tool_call_is_not_an_object_is_a_miss_for_a_streamed_hit_never_a_panic() {
    // A gateway of its own: a panic loses the isolate.
    let gw = Gateway::start(&[]);
    let (t, mock) = gw.tenant_with_mock("cache-corrupt", &["sk-1"], "round_robin");
    t.put_ok("/settings", json!({"cache": {"ttl_s": 300}}));
    let odd = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": null, "tool_calls": [5]}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}});
    mock.push(Rule::any(Reply::json(200, &odd.to_string())).times(1));
    let mut body = chat_body("hello", 0.2);
    stored(&t, &post(&t, &body, &[]));
    body["stream"] = json!(true);
    let r = post_raw(&gw, &t.key, body.to_string(), &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.header("x-cognigate-cache"),
        Some("miss"),
        "the entry it cannot stream is a miss: {}",
        r.text
    );
    assert!(r.text.contains("data: [DONE]"), "{}", r.text);
    assert_eq!(mock.count(), 2, "answered upstream");
    assert_eq!(t.chat("m").status, 200, "the isolate serves on");
}
