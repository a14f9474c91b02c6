//! Governance that a caller's labels, a refusal fallback or a route without an upstream call
//! cannot get around, end to end on workerd against scripted mocks:
//! - the prompt estimate is never below that of the request's text, whatever a part is labelled;
//! - a refusal fallback reserves every answer it may bill, each at its model's price;
//! - `/v1/health` with a key, `/v1/models/metrics` and `/v1/messages/count_tokens` count against
//!   the key's `rpm`.

use crate::support::gateway::{eventually, Gateway, Resp, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::Duration;

/// Ledger settling and the log both trail the answer.
const SETTLED: Duration = Duration::from_secs(10);

fn post(gw: &Gateway, key: &str, path: &str, body: &Value) -> Resp {
    gw.request("POST", path, Some(key), Some(&body.to_string()))
}

// ---- The estimate cannot be lowered by a label ----

/// An answer without `usage`: the request is charged the gateway's estimate.
fn no_usage() -> Reply {
    Reply::json(
        200,
        r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}"#,
    )
}

#[test]
fn a_large_text_in_a_part_labelled_as_an_image_is_billed_by_its_text_bytes_and_spends_the_budget() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("label-image").unwrap();
    let t = gw.tenant("label-image");
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    // $10 per million tokens each way: 100,000 tokens cost $1.
    t.model("m", "p", 10.0, 1_000_000);
    mock.set_default(no_usage());
    let (id, key) = t.key_with(json!({"budget": {"usd": 0.5, "period": "day"}}));
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(9_000);
    assert!(text.len() >= 400_000);
    let body = json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "Summarise the following."},
        {"type": "image", "text": text},
    ]}]});
    let r = post(gw, &key, "/v1/chat/completions", &body);
    assert_eq!(r.status, 200, "{}", r.text);
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert_eq!(rec["usage_source"], "estimated", "{rec}");
    let prompt = rec["tokens"]["prompt"].as_u64().unwrap();
    assert!(
        prompt >= 100_000,
        "400 KB of text counts a quarter of its bytes, not one image's 1,600 tokens: {rec}"
    );
    // About $1 spent: the key's $0.50 budget now refuses, with no upstream call.
    eventually("the key's spend to move", SETTLED, || {
        t.key_spend(&id) > 0.0
    });
    assert!(t.key_spend(&id) >= 1.0, "spend {}", t.key_spend(&id));
    let calls = mock.count();
    let r = post(gw, &key, "/v1/chat/completions", &body);
    assert_eq!(r.status, 402, "{}", r.text);
    assert_eq!(mock.count(), calls);
}

// ---- A refusal fallback reserves what it may bill ----

/// OpenAI's safety refusal, after `delay_ms`: the request stays in flight meanwhile.
fn content_filter(delay_ms: u64) -> Reply {
    crate::support::replies::content_filter().delay(delay_ms)
}

/// Sends `name` with `max_tokens` 1,000 (1,008 tokens a reserved answer) while a first such
/// request, whose first candidate refuses after 1.5 s, is in flight; the second's answer, then
/// the first's.
fn second_while_the_first_refusal_is_in_flight(
    t: &Tenant<'static>,
    mock: &MockProvider,
    key: &str,
    name: &str,
) -> (Resp, Resp) {
    mock.push(Rule::any(content_filter(1_500)).model("m1").times(1));
    let body = json!({"model": name, "max_tokens": 1000,
        "messages": [{"role": "user", "content": "hi"}]});
    let (gw, first_key, first_body) = (t.gw, key.to_owned(), body.clone());
    let first =
        std::thread::spawn(move || post(gw, &first_key, "/v1/chat/completions", &first_body));
    eventually("the first request to reach its upstream", SETTLED, || {
        mock.count() >= 1
    });
    let second = post(t.gw, key, "/v1/chat/completions", &body);
    (second, first.join().unwrap())
}

fn fallback_tenant(hint: &str, m1_price: f64, m2_price: f64) -> (Tenant<'static>, MockProvider) {
    let gw = Gateway::shared();
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model("m1", "p", m1_price, 8000);
    t.model("m2", "p", m2_price, 8000);
    (t, mock)
}

#[test]
fn a_refusal_fallback_reserves_both_answers_so_a_budget_that_fits_one_more_refuses_the_next() {
    // Both models at $100 per million: one answer reserves 1,008 tokens, $0.1008; a refusal and
    // its fallback, $0.2016. The budget fits one more answer, not two.
    let (t, mock) = fallback_tenant("refusal-reserve", 100.0, 100.0);
    t.put_ok(
        "/routing-rules",
        json!({"match": "guarded", "chain": ["m1", "m2"], "on_refusal": "fallback"}),
    );
    let (_, key) = t.key_with(json!({"budget": {"usd": 0.15, "period": "day"}}));
    let (second, first) = second_while_the_first_refusal_is_in_flight(&t, &mock, &key, "guarded");
    assert_eq!(
        second.status, 402,
        "the first request holds both answers it may bill: {}",
        second.text
    );
    assert_eq!(second.error_code().as_deref(), Some("budget_exceeded"));
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.header("x-cognigate-policy-fallback"), Some("applied"));
    assert_eq!(
        mock.count(),
        2,
        "the refusal and its fallback, nothing for the second"
    );
}

#[test]
fn an_alias_runner_up_is_reserved_at_its_own_price() {
    // The alias pins m1 ($1 per million); after a refusal its runner-up m2 ($100) answers. Held
    // at m1's price alone, the first request would leave room under $0.05 for a second.
    let (t, mock) = fallback_tenant("refusal-runner-up", 1.0, 100.0);
    t.put_ok(
        "/aliases/safe",
        json!({"pin": "m1", "on_refusal": "fallback"}),
    );
    let (_, key) = t.key_with(json!({"budget": {"usd": 0.05, "period": "day"}}));
    let (second, first) = second_while_the_first_refusal_is_in_flight(&t, &mock, &key, "safe");
    assert_eq!(
        second.status, 402,
        "the runner-up's answer is held at its own price: {}",
        second.text
    );
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.header("x-cognigate-model"), Some("m2"));
    assert_eq!(mock.count(), 2);
}

// ---- Fan-out routes are rate-limited ----

fn get(gw: &Gateway, key: &str, path: &str) -> Resp {
    gw.request("GET", path, Some(key), None)
}

fn retry_after(r: &Resp) -> u64 {
    r.header("retry-after")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("a Retry-After: {:?}", r.headers))
}

#[test]
fn a_key_with_rpm_3_gets_429_on_the_fourth_call_of_each_fan_out_route() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("fan-out-rpm", &["sk-1"], "failover");
    let count = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    type Call = Box<dyn Fn(&str) -> Resp>;
    let routes: [(&str, Call); 3] = [
        (
            "/v1/health",
            Box::new(|key: &str| get(gw, key, "/v1/health")),
        ),
        (
            "/v1/models/metrics",
            Box::new(|key: &str| get(gw, key, "/v1/models/metrics")),
        ),
        (
            "/v1/messages/count_tokens",
            Box::new(move |key: &str| post(gw, key, "/v1/messages/count_tokens", &count)),
        ),
    ];
    for (path, call) in &routes {
        let (_, key) = t.key_with(json!({"rpm": 3}));
        for n in 1..=3 {
            let r = call(&key);
            assert_eq!(r.status, 200, "{path} call {n}: {}", r.text);
        }
        let r = call(&key);
        assert_eq!(r.status, 429, "{path}: the fourth call: {}", r.text);
        assert!((1..=60).contains(&retry_after(&r)), "{path}");
        let v = r.json();
        if *path == "/v1/messages/count_tokens" {
            assert_eq!(v["type"], "error", "Anthropic's shape: {v}");
            assert_eq!(v["error"]["type"], "rate_limit_error", "{v}");
        } else {
            assert_eq!(v["error"]["code"], "rate_limit_exceeded", "{v}");
        }
    }
    // A key without an rpm is never counted: it keeps calling.
    for _ in 0..5 {
        assert_eq!(get(gw, &t.key, "/v1/health").status, 200);
    }
}

#[test]
fn a_fan_out_call_takes_a_slot_of_the_minute_the_keys_requests_count_in() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("fan-out-shared", &["sk-1"], "failover");
    let (_, key) = t.key_with(json!({"rpm": 3}));
    for path in ["/v1/health", "/v1/models/metrics"] {
        assert_eq!(get(gw, &key, path).status, 200);
    }
    let chat = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(post(gw, &key, "/v1/chat/completions", &chat).status, 200);
    let r = post(gw, &key, "/v1/chat/completions", &chat);
    assert_eq!(
        r.status, 429,
        "two calls and one request fill an rpm of 3: {}",
        r.text
    );
    assert_eq!(mock.count(), 1);
}
