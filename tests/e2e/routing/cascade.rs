//! The cascade end to end: key rotation, Retry-After parking in the Durable Object, the
//! never-retried 4xx and the aggregated 502, against scripted mock providers.

use crate::support::gateway::Gateway;
use cognigate::cascade::retry_after::imf_fixdate;
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::json;
use std::time::{SystemTime, UNIX_EPOCH};

fn rate_limited() -> Reply {
    Reply::json(
        429,
        r#"{"error":{"message":"Rate limit reached for org-secret-123","type":"rate_limit_error"}}"#,
    )
}

#[test]
fn a_429_on_key_1_then_200_on_key_2_serves_at_depth_0() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("rot", &["sk-1", "sk-2"], "failover");
    mock.push(Rule::any(rate_limited()).key("sk-1").times(1));
    let r = t.chat("m");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("0"));
    assert_eq!(mock.keys(), ["sk-1", "sk-2"]);
    assert_eq!(
        mock.calls()[1].model.as_deref(),
        Some("m"),
        "the same model is retried"
    );
}

#[test]
fn whole_pool_429_moves_to_the_next_chain_position_at_depth_1() {
    let gw = Gateway::shared();
    let first = MockProvider::start("first").unwrap();
    let second = MockProvider::start("second").unwrap();
    let t = gw.tenant("pool");
    t.provider("one", &first.url(), &["sk-a", "sk-b"], "failover");
    t.provider("two", &second.url(), &["sk-c"], "failover");
    t.model("m1", "one", 1.0, 8000);
    t.model("m2", "two", 1.0, 8000);
    t.rule("chain", &["m1", "m2"]);
    first.push(Rule::any(rate_limited()));
    let r = t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
    assert_eq!(r.header("x-cognigate-model"), Some("m2"));
    assert_eq!(r.header("x-cognigate-provider"), Some("two"));
    assert_eq!(
        first.keys(),
        ["sk-a", "sk-b"],
        "the whole pool was tried first"
    );
    assert_eq!(second.count(), 1);
}

/// A 429 carrying `retry_after` on sk-1 parks it: with failover every request would start at
/// sk-1, so the request after the 429 going straight to sk-2 shows the park held across requests.
fn assert_parks_across_requests(hint: &str, retry_after: &str) {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1", "sk-2"], "failover");
    mock.push(
        Rule::any(rate_limited().header("Retry-After", retry_after))
            .key("sk-1")
            .times(1),
    );
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), ["sk-1", "sk-2", "sk-2"]);
}

#[test]
fn retry_after_in_seconds_parks_the_key_across_requests() {
    assert_parks_across_requests("park-s", "120");
}

#[test]
fn retry_after_as_an_http_date_parks_the_key_across_requests() {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert_parks_across_requests("park-d", &imf_fixdate(now_ms + 600_000));
}

#[test]
fn when_every_key_is_parked_the_pool_is_still_tried() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("allparked", &["sk-1", "sk-2"], "failover");
    mock.push(Rule::any(rate_limited().header("Retry-After", "300")).times(2));
    let r = t.chat("m");
    assert_eq!(r.status, 502, "{}", r.text);
    let r = t.chat("m");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        mock.count(),
        3,
        "both keys parked, yet the next request still called upstream"
    );
}

#[test]
fn round_robin_spreads_requests_evenly_over_the_keys() {
    Gateway::shared().assert_round_robin_even("rr");
}

#[test]
fn a_400_costs_exactly_one_upstream_call_and_passes_the_providers_message_through() {
    let gw = Gateway::shared();
    let first = MockProvider::start("refuse").unwrap();
    let second = MockProvider::start("never").unwrap();
    let t = gw.tenant("refuse");
    t.provider("one", &first.url(), &["sk-1", "sk-2"], "failover");
    t.provider("two", &second.url(), &["sk-3"], "failover");
    t.model("m1", "one", 1.0, 8000);
    t.model("m2", "two", 1.0, 8000);
    t.rule("chain", &["m1", "m2"]);
    first.push(Rule::any(Reply::json(
        400,
        r#"{"error":{"message":"This prompt violates the content policy.","type":"invalid_request_error","code":"content_policy_violation","param":"messages"}}"#,
    )));
    let r = t.chat("chain");
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json(),
        json!({"error": {"type": "invalid_request_error", "code": "content_policy_violation",
            "message": "This prompt violates the content policy.", "param": "messages"}})
    );
    assert_eq!(first.count(), 1, "no key rotation");
    assert_eq!(second.count(), 0, "no cascade");
}

#[test]
fn when_all_three_candidates_fail_the_502_matches_the_spec_without_upstream_text() {
    let gw = Gateway::shared();
    let (a, b, c) = (
        MockProvider::start("a").unwrap(),
        MockProvider::start("b").unwrap(),
        MockProvider::start("c").unwrap(),
    );
    let t = gw.tenant("exhaust");
    t.provider("openai", &a.url(), &["sk-a"], "failover");
    t.provider("together", &b.url(), &["sk-b"], "failover");
    t.provider("local", &c.url(), &["sk-c"], "failover");
    t.model("gpt-4o", "openai", 5.0, 128_000);
    t.model("llama-3.3-70b", "together", 1.0, 128_000);
    t.model("llama-3.1-70b", "local", 0.1, 128_000);
    t.rule("best", &["gpt-4o", "llama-3.3-70b", "llama-3.1-70b"]);
    a.push(Rule::any(rate_limited()));
    b.push(Rule::any(Reply::json(
        503,
        "upstream stack trace: secret internals",
    )));
    c.push(Rule::any(Reply::json(
        500,
        r#"{"error":{"message":"GPU on fire at 10.0.0.7"}}"#,
    )));
    let r = t.chat("best");
    assert_eq!(r.status, 502);
    assert_eq!(
        r.json(),
        json!({"error": {
            "type": "api_error",
            "code": "upstream_exhausted",
            "message": "All 3 routing candidates failed.",
            "attempts": [
                {"provider": "openai", "model": "gpt-4o", "failure": "rate_limit", "status": 429},
                {"provider": "together", "model": "llama-3.3-70b", "failure": "server", "status": 503},
                {"provider": "local", "model": "llama-3.1-70b", "failure": "server", "status": 500}
            ]
        }})
    );
    for secret in ["org-secret-123", "secret internals", "GPU on fire", "sk-a"] {
        assert!(!r.text.contains(secret), "{secret} leaked: {}", r.text);
    }
    // The upstream's words are in the log line instead.
    let log = gw.log_containing("GPU on fire at 10.0.0.7");
    assert!(log.contains("GPU on fire at 10.0.0.7"));
}

#[test]
fn timeouts_and_refused_connections_move_down_the_chain() {
    let gw = Gateway::shared();
    let slow = MockProvider::start("slow").unwrap();
    let good = MockProvider::start("good").unwrap();
    let t = gw.tenant("timeout");
    let r = t.put(
        "/providers/slow",
        json!({"kind": "openai", "base_url": slow.url(), "keys": ["sk-s"], "timeout_ms": 300}),
    );
    assert_eq!(r.status, 200);
    // Nothing listens on port 9: connection refused.
    t.provider("dead", "http://127.0.0.1:9/v1", &["sk-d"], "failover");
    t.provider("good", &good.url(), &["sk-g"], "failover");
    t.model("slow-model", "slow", 1.0, 8000);
    t.model("dead-model", "dead", 1.0, 8000);
    t.model("good-model", "good", 1.0, 8000);
    t.rule("chain", &["slow-model", "dead-model", "good-model"]);
    slow.push(Rule::any(Reply::ok().delay(3_000)));
    let r = t.chat("chain");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("2"));
    assert_eq!(r.header("x-cognigate-model"), Some("good-model"));
    let line = gw.request_line(r.header("x-cognigate-request-id").unwrap());
    let failures: Vec<&str> = line["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["failure"].as_str().unwrap_or("served"))
        .collect();
    assert_eq!(failures, ["timeout", "network", "served"]);
}

#[test]
fn upstream_gets_the_provider_key_and_the_upstream_model_never_the_callers_credentials() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("headers").unwrap();
    let t = gw.tenant("headers");
    t.provider("p", &mock.url(), &["sk-provider"], "failover");
    let r = t.put(
        "/models/alias-facing",
        json!({"provider": "p", "upstream_model": "real-upstream-name", "context_window": 8000}),
    );
    assert_eq!(r.status, 200);
    let body = json!({"model": "alias-facing", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.3});
    let req = ureq::http::Request::builder()
        .method("POST")
        .uri(format!("{}/v1/chat/completions", gw.url))
        .header("authorization", format!("Bearer {}", t.key))
        .header("cookie", "session=caller-cookie")
        .header("x-api-key", "caller-x-api-key")
        .body(body.to_string())
        .unwrap();
    let resp = crate::support::gateway::agent().run(req).unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let call = &mock.calls()[0];
    assert_eq!(call.header("authorization"), Some("Bearer sk-provider"));
    assert_eq!(call.header("cookie"), None);
    assert_eq!(call.header("x-api-key"), None);
    assert_eq!(call.body["model"], "real-upstream-name");
    assert_eq!(call.body["temperature"], 0.3);
    assert!(!format!("{:?}", call.headers).contains(&t.key));
}

#[test]
fn one_structured_log_line_per_request_names_key_ids_never_keys() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock(
        "logline",
        &["sk-log-key-aaaa", "sk-log-key-bbbb"],
        "failover",
    );
    mock.push(Rule::any(rate_limited()).key("sk-log-key-aaaa").times(1));
    let r = t.chat("m");
    let id = r.header("x-cognigate-request-id").unwrap().to_owned();
    let log = gw.log_containing(&id);
    let lines: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|l: &serde_json::Value| l["request_id"] == id.as_str())
        .filter(|l: &serde_json::Value| l["msg"] == "request")
        .collect();
    // One request line; the request's usage record (`"msg":"usage"`) carries its id too.
    assert_eq!(lines.len(), 1);
    let line = &lines[0];
    assert_eq!(line["tenant"], t.id.as_str());
    assert_eq!(line["requested"], "m");
    assert_eq!(line["outcome"], "served");
    assert_eq!(line["attempts"].as_array().unwrap().len(), 2);
    assert!(line["attempts"][0]["key_id"]
        .as_str()
        .unwrap()
        .starts_with("key_"));
    assert_eq!(line["attempts"][0]["status"], 429);
    assert!(line["total_ms"].is_u64());
    assert!(!log.contains("sk-log-key-aaaa") && !log.contains("sk-log-key-bbbb"));
}

#[test]
fn park_windows_survive_the_routing_object_being_evicted() {
    // A private runtime, restarted on the same storage: every Durable Object is evicted and its
    // state must come back from storage, not memory.
    let gw = Gateway::start_durable();
    let mock = MockProvider::start("evict").unwrap();
    let (tenant, key) = {
        let t = gw.tenant("evict");
        t.provider("p", &mock.url(), &["sk-1", "sk-2"], "failover");
        t.model("m", "p", 1.0, 8000);
        mock.push(
            Rule::any(rate_limited().header("Retry-After", "600"))
                .key("sk-1")
                .times(1),
        );
        assert_eq!(t.chat("m").status, 200);
        (t.id.clone(), t.key.clone())
    };
    let gw = gw.restart();
    let r = gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&key),
        Some(r#"{"model":"m"}"#),
    );
    assert_eq!(r.status, 200, "{tenant}: {}", r.text);
    assert_eq!(
        mock.keys(),
        ["sk-1", "sk-2", "sk-2"],
        "sk-1 is still parked after the restart"
    );
}
