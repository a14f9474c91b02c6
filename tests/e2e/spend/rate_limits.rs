//! Rate limits end to end against scripted mocks: more rate-limit signals, benched credentials,
//! per-provider `rpm` and the context-window guard.

use crate::support::gateway::Gateway;
use crate::support::resilience::{breakers, now_ms, provider, single};
use cognigate::config::period::civil_from_days;
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::Duration;

fn rate_limited() -> Reply {
    Reply::json(
        429,
        r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#,
    )
}

/// Two requests after a 429 on sk-1 (failover: each starts at sk-1): the keys the mock saw.
fn keys_after_a_429(hint: &str, extra: Value, reply: Reply) -> Vec<String> {
    let gw = Gateway::shared();
    let (t, mock) = single(gw, hint, &["sk-1", "sk-2"], extra);
    mock.push(Rule::any(reply).key("sk-1").times(1));
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    mock.keys()
}

#[test]
fn a_429_with_only_x_ratelimit_reset_requests_2s_parks_the_key_with_the_signal_on_and_not_off() {
    let reply = || rate_limited().header("x-ratelimit-reset-requests", "2s");
    let on = json!({"rate_limit_signals": ["x-ratelimit-reset"]});
    assert_eq!(
        keys_after_a_429("xrl-on", on, reply()),
        ["sk-1", "sk-2", "sk-2"]
    );
    let off = json!({});
    assert_eq!(
        keys_after_a_429("xrl-off", off, reply()),
        ["sk-1", "sk-2", "sk-1"],
        "without the signal: no Retry-After, no park"
    );
}

/// RFC 3339 in UTC, as Anthropic writes its reset times.
fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[test]
fn an_anthropic_429_with_the_reset_headers_parks_the_key_until_that_time() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("ant-reset").unwrap();
    let t = gw.tenant("ant-reset");
    t.put_ok(
        "/providers/anthropic",
        json!({"kind": "anthropic", "base_url": mock.url(), "keys": ["sk-ant-1", "sk-ant-2"],
               "key_strategy": "failover", "timeout_ms": 5000, "rate_limit_signals": ["anthropic-ratelimit"]}),
    );
    t.model("claude", "anthropic", 1.0, 200_000);
    let reset_at = now_ms() + 3_000;
    mock.push(
        Rule::any(
            Reply::json(
                429,
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
            )
            .header("anthropic-ratelimit-requests-reset", &rfc3339(reset_at))
            .header(
                "anthropic-ratelimit-tokens-reset",
                &rfc3339(reset_at - 2_000),
            ),
        )
        .key("sk-ant-1")
        .times(1),
    );
    assert_eq!(t.chat("claude").status, 200);
    assert_eq!(t.chat("claude").status, 200);
    assert_eq!(mock.keys(), ["sk-ant-1", "sk-ant-2", "sk-ant-2"], "parked");
    // The header's time is in whole seconds; a little past it, the key is tried first again.
    let wait = (reset_at / 1000 * 1000 + 300).saturating_sub(now_ms());
    std::thread::sleep(Duration::from_millis(wait));
    assert_eq!(t.chat("claude").status, 200);
    assert_eq!(mock.keys().last().map(String::as_str), Some("sk-ant-1"));
}

#[test]
fn a_rate_limit_shaped_200_rotates_keys_with_the_signal_on() {
    let shaped = || {
        Reply::json(
            200,
            r#"{"error":{"message":"slow down","type":"rate_limit_error"}}"#,
        )
    };
    let gw = Gateway::shared();
    let on = json!({"rate_limit_signals": ["rate_limited_200"]});
    let (t, mock) = single(gw, "rl200-on", &["sk-1", "sk-2"], on);
    mock.push(Rule::any(shaped()).key("sk-1").times(1));
    let r = t.chat("m");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("0"));
    assert_eq!(mock.keys(), ["sk-1", "sk-2"], "rotated like a 429");

    let (t, mock) = single(gw, "rl200-off", &["sk-1", "sk-2"], json!({}));
    mock.push(Rule::any(shaped()).key("sk-1").times(1));
    let r = t.chat("m");
    assert_eq!(
        r.status, 200,
        "without the signal a 200 is passed on as it came: {}",
        r.text
    );
    assert_eq!(r.json()["error"]["type"], "rate_limit_error");
    assert_eq!(mock.keys(), ["sk-1"], "no rotation with the signal off");
}

#[test]
fn a_401d_key_is_skipped_by_the_next_request_with_auth_cooldown_ms_set_until_a_reset() {
    let gw = Gateway::shared();
    let bench = json!({"auth_cooldown_ms": 60000});
    let (t, mock) = single(gw, "bench", &["sk-1", "sk-2"], bench);
    mock.push(Rule::any(Reply::status(401)).key("sk-1").times(1));
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(
        mock.keys(),
        ["sk-1", "sk-2", "sk-2"],
        "benched across requests"
    );
    let r = gw.admin(
        "POST",
        &t.path("/breakers/reset"),
        Some(json!({"provider": "p"})),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(
        mock.keys().last().map(String::as_str),
        Some("sk-1"),
        "a reset frees it"
    );

    let (t, mock) = single(gw, "nobench", &["sk-1", "sk-2"], json!({}));
    mock.push(Rule::any(Reply::status(401)).key("sk-1").times(1));
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(
        mock.keys(),
        ["sk-1", "sk-2", "sk-1"],
        "without the field a 401 benches no key"
    );
}

fn chat_body(model: &str, messages: Value) -> String {
    json!({"model": model, "messages": messages, "max_tokens": 100}).to_string()
}

#[test]
fn a_200k_token_prompt_skips_a_32k_context_candidate_without_calling_it_and_truncates_to_fit_when_asked(
) {
    let gw = Gateway::shared();
    let small = MockProvider::start("cw-small").unwrap();
    let large = MockProvider::start("cw-large").unwrap();
    let t = gw.tenant("cw");
    provider(&t, "s", &small.url(), &["sk-s"], json!({}));
    provider(&t, "l", &large.url(), &["sk-l"], json!({}));
    t.model("small", "s", 1.0, 32_000);
    t.model("large", "l", 1.0, 250_000);
    t.rule("chain", &["small", "large"]);
    // ~200k tokens of old conversation by the documented estimate (800 kB / 4).
    let old = "x".repeat(800_000);
    let messages = json!([
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": old},
        {"role": "assistant", "content": "noted"},
        {"role": "user", "content": "and the answer?"}
    ]);
    let body = chat_body("chain", messages.clone());
    // Guard off, the default: the first candidate is simply called.
    let r = gw.request("POST", "/v1/chat/completions", Some(&t.key), Some(&body));
    assert_eq!(r.header("x-cognigate-model"), Some("small"), "{}", r.status);
    assert_eq!(small.count(), 1);
    small.clear();
    t.put_ok("/settings", json!({"context_window_guard": true}));
    let r = gw.request("POST", "/v1/chat/completions", Some(&t.key), Some(&body));
    assert_eq!(r.status, 200, "{}", &r.text[..r.text.len().min(500)]);
    assert_eq!(r.header("x-cognigate-model"), Some("large"));
    assert_eq!(
        r.header("x-cognigate-fallback-depth"),
        Some("0"),
        "a context_window skip costs no depth"
    );
    assert_eq!(r.header("x-cognigate-truncated"), None);
    assert_eq!(small.count(), 0, "never called");

    let body = chat_body("small", messages);
    let r = gw.request("POST", "/v1/chat/completions", Some(&t.key), Some(&body));
    assert_eq!(r.status, 502);
    assert_eq!(
        r.json()["error"]["attempts"][0]["failure"],
        "context_window"
    );
    assert_eq!(small.count(), 0);

    let req = ureq::http::Request::builder()
        .method("POST")
        .uri(format!("{}/v1/chat/completions", gw.url))
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {}", t.key))
        .header("x-cognigate-truncate", "oldest");
    let resp = crate::support::gateway::agent()
        .run(req.body(body).unwrap())
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers()
            .get("x-cognigate-truncated")
            .and_then(|v| v.to_str().ok()),
        Some("2"),
        "the old user turn and the assistant turn after it"
    );
    let sent = small.calls()[0].body["messages"].clone();
    assert_eq!(
        sent,
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "and the answer?"}])
    );
}

#[test]
fn rpm_2_skips_the_provider_on_the_third_request_inside_a_minute() {
    let gw = Gateway::shared();
    let main = MockProvider::start("rpm-main").unwrap();
    let backup = MockProvider::start("rpm-backup").unwrap();
    let t = gw.tenant("rpm");
    provider(&t, "p", &main.url(), &["sk-1"], json!({"rpm": 2}));
    provider(&t, "b", &backup.url(), &["sk-b"], json!({}));
    t.model("m", "p", 1.0, 8000);
    t.model("backup", "b", 1.0, 8000);
    t.rule("chain", &["m", "backup"]);
    for _ in 0..2 {
        let r = t.chat("chain");
        assert_eq!(r.header("x-cognigate-model"), Some("m"), "{}", r.text);
    }
    let r = t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("backup"));
    assert_eq!(main.count(), 2, "no upstream call past the rate");
    let r = t.chat("m");
    assert_eq!(r.status, 502);
    assert_eq!(
        r.json()["error"]["attempts"][0]["failure"],
        "local_rate_limit"
    );
    let secs: u64 = r
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=60).contains(&secs), "{secs}");
    assert!(breakers(&t).is_empty(), "not a failure toward the breaker");
}
