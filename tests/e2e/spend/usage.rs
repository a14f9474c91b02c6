//! Usage on every answer: tokens read from each answer or stream, the cost at the
//! serving model's prices in `X-CogniGate-Cost-Usd`, and one usage record per request, read here
//! from the worker's log (`"msg":"usage"`), which is where the request path hands it over.

use crate::support::gateway::Gateway;
use crate::support::sdk::openai_sdk;
use crate::support::spend::priced;
use cognigate::mock::{MockProvider, Reply, Step};
use serde_json::{json, Value};
use std::time::Duration;

fn chat_body(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "hi"}]})
}

#[test]
fn a_priced_models_answer_carries_its_cost_and_one_usage_record_with_the_end_user_header() {
    let gw = Gateway::shared();
    let prices = json!({"input_price_per_mtok": 2.5, "output_price_per_mtok": 10});
    let (t, _mock) = priced(gw, "cost", "openai", prices);
    // The mock reports 5 prompt and 7 completion tokens: 5 × 2.5 + 7 × 10 = 82.5 per million.
    let mut body = chat_body("m");
    body["user"] = json!("from-body");
    let r = t.post_with(
        "/v1/chat/completions",
        &body,
        &[("x-cognigate-user", "alice")],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-cost-usd"), Some("0.0000825"));
    let rec = &gw.usage_records(&t.id, 1, Duration::from_secs(10))[0];
    assert_eq!(
        rec["tokens"],
        json!({"prompt": 5, "completion": 7, "cached": 0})
    );
    assert!((rec["cost_usd"].as_f64().unwrap() - 0.0000825).abs() < 1e-12);
    assert_eq!(
        rec["end_user"], "alice",
        "the header wins over the body's user"
    );
    assert_eq!(
        (rec["served_model"].as_str(), rec["provider"].as_str()),
        (Some("m"), Some("p"))
    );
    assert_eq!(
        (rec["requested"].as_str(), rec["outcome"].as_str()),
        (Some("m"), Some("served"))
    );
    let listed = gw.admin("GET", &t.path("/api-keys"), None).json();
    assert_eq!(
        rec["key_id"], listed["data"][0]["id"],
        "the caller key's id: {listed}"
    );
    assert!(!gw.log().contains(&t.key), "the key itself is never logged");
    // Without the header, the body's `user` field (the SDK sends it) names the end user.
    let v = openai_sdk(&t, "m", "chat_cost", &[]);
    assert_eq!(v["cost"], "0.0000825");
    assert_eq!(
        gw.usage_records(&t.id, 2, Duration::from_secs(10))[1]["end_user"],
        "sdk-user"
    );
}

#[test]
fn a_fallback_answer_is_charged_at_the_prices_of_the_model_that_served_it() {
    let gw = Gateway::shared();
    let (t, _mock) = priced(
        gw,
        "fallback-cost",
        "openai",
        json!({"input_price_per_mtok": 1000}),
    );
    let down = MockProvider::start("down").unwrap();
    down.set_default(Reply::status(500));
    t.provider("broken", &down.url(), &["sk-down"], "failover");
    t.put_ok(
        "/models/cheap-but-down",
        json!({"provider": "broken", "context_window": 100000, "input_price_per_mtok": 0.01}),
    );
    assert_eq!(t.rule("chain", &["cheap-but-down", "m"]).status, 200);
    let r = t.post_with("/v1/chat/completions", &chat_body("chain"), &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("m"));
    // 5 prompt tokens at $1000 per million, output free.
    assert_eq!(r.header("x-cognigate-cost-usd"), Some("0.005"));
    let rec = &gw.usage_records(&t.id, 1, Duration::from_secs(10))[0];
    assert_eq!(rec["served_model"], "m");
    assert_eq!(rec["requested"], "chain");
}

#[test]
fn a_stream_without_include_usage_has_no_usage_chunk_while_the_record_has_the_tokens() {
    let gw = Gateway::shared();
    let prices = json!({"input_price_per_mtok": 1, "output_price_per_mtok": 1});
    let (t, mock) = priced(gw, "stream-strip", "openai", prices);
    let v = openai_sdk(&t, "m", "chat_stream", &[]);
    assert_eq!(v["usage_chunks"], 0, "{v}");
    assert!(v["text"].as_str().unwrap().starts_with("Hello from"), "{v}");
    assert_eq!(
        mock.calls()[0].body["stream_options"],
        json!({"include_usage": true}),
        "the upstream is asked for usage all the same"
    );
    let rec = &gw.usage_records(&t.id, 1, Duration::from_secs(10))[0];
    assert_eq!(
        rec["tokens"],
        json!({"prompt": 5, "completion": 7, "cached": 0})
    );
    assert!((rec["cost_usd"].as_f64().unwrap() - 0.000012).abs() < 1e-12);
}

#[test]
fn a_stream_with_include_usage_passes_the_usage_chunk_and_records_it() {
    let gw = Gateway::shared();
    let (t, _mock) = priced(
        gw,
        "stream-keep",
        "openai",
        json!({"input_price_per_mtok": 1}),
    );
    let v = openai_sdk(&t, "m", "chat_stream", &["include_usage"]);
    assert_eq!(v["usage_chunks"], 1, "{v}");
    assert_eq!(v["usage"], json!({"prompt": 5, "completion": 7}));
    assert_eq!(
        gw.usage_records(&t.id, 1, Duration::from_secs(10))[0]["tokens"]["prompt"],
        5
    );
}

#[test]
fn a_streamed_answer_has_no_cost_header_and_a_cut_stream_is_recorded_with_estimated_tokens() {
    let gw = Gateway::shared();
    let (t, mock) = priced(
        gw,
        "stream-cut",
        "openai",
        json!({"input_price_per_mtok": 1}),
    );
    mock.set_default(Reply::stream(vec![
        Step::Data(r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"par"}}]}"#.into()),
        Step::Cut,
    ]));
    let mut body = chat_body("m");
    body["stream"] = json!(true);
    let r = t.post_with("/v1/chat/completions", &body, &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-cognigate-cost-usd"), None);
    assert!(r.text.contains("upstream_stream_error"), "{}", r.text);
    let rec = &gw.usage_records(&t.id, 1, Duration::from_secs(10))[0];
    assert_eq!(rec["outcome"], "served", "cut after the first byte: served");
    // Never free: the prompt estimate (ceil(bytes of `messages` / 4)) and "par" relayed (1 token).
    let prompt = body["messages"].to_string().len().div_ceil(4) as u64;
    assert_eq!(rec["usage_source"], "estimated", "{rec}");
    assert_eq!(
        rec["tokens"],
        json!({"prompt": prompt, "completion": 1, "cached": 0})
    );
    assert!((rec["cost_usd"].as_f64().unwrap() - prompt as f64 / 1e6).abs() < 1e-12);
}

#[test]
fn an_answer_without_usage_carries_the_estimated_cost_and_is_recorded_as_estimated() {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "no-usage", "openai", json!({"input_price_per_mtok": 1}));
    mock.set_default(Reply::json(
        200,
        r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#,
    ));
    let body = chat_body("m");
    let r = t.post_with("/v1/chat/completions", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    let prompt = body["messages"].to_string().len().div_ceil(4) as u64;
    let cost = cognigate::usage::usd_decimal(prompt as f64 / 1e6);
    assert_eq!(r.header("x-cognigate-cost-usd"), Some(cost.as_str()));
    let rec = &gw.usage_records(&t.id, 1, Duration::from_secs(10))[0];
    assert_eq!(
        (rec["usage_source"].as_str(), &rec["tokens"]),
        (
            Some("estimated"),
            &json!({"prompt": prompt, "completion": 1, "cached": 0})
        ),
        "never a silent zero: {rec}"
    );
    assert_eq!(rec["outcome"], "served");
}

#[test]
fn openai_cached_tokens_are_charged_at_the_cached_input_price() {
    let gw = Gateway::shared();
    let prices = json!({"input_price_per_mtok": 2, "cached_input_price_per_mtok": 0.5});
    let (t, mock) = priced(gw, "oa-cached", "openai", prices);
    mock.set_default(Reply::json(
        200,
        r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":1000,"completion_tokens":0,"prompt_tokens_details":{"cached_tokens":800}}}"#,
    ));
    let r = t.post_with("/v1/chat/completions", &chat_body("m"), &[]);
    // 200 × 2 + 800 × 0.5 = 800 per million.
    assert_eq!(r.header("x-cognigate-cost-usd"), Some("0.0008"));
    assert_eq!(
        gw.usage_records(&t.id, 1, Duration::from_secs(10))[0]["tokens"]["cached"],
        800
    );
}

#[test]
fn an_anthropic_upstreams_cache_reads_are_counted_and_charged_at_the_cached_price() {
    let gw = Gateway::shared();
    let prices = json!({"input_price_per_mtok": 3, "cached_input_price_per_mtok": 0.3, "output_price_per_mtok": 15});
    let (t, mock) = priced(gw, "ant-cached", "anthropic", prices);
    mock.set_default(Reply::json(
        200,
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",
            "usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":10}}"#,
    ));
    let r = t.post_with("/v1/chat/completions", &chat_body("m"), &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    // Prompt 1300 of which 1000 cached and 200 written (a 5-minute write at the default 1.25 ×
    // input): 100 × 3 + 1000 × 0.3 + 200 × 3.75 + 10 × 15 = 1500 per million.
    assert_eq!(r.header("x-cognigate-cost-usd"), Some("0.0015"));
    assert_eq!(
        r.json()["usage"]["prompt_tokens_details"]["cached_tokens"],
        1000
    );
    // The Messages surface passes the answer through natively and is metered the same way.
    let body =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/messages", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-cost-usd"), Some("0.0015"));
    let recs = gw.usage_records(&t.id, 2, Duration::from_secs(10));
    for rec in &recs {
        assert_eq!(
            rec["tokens"],
            json!({"prompt": 1300, "completion": 10, "cached": 1000, "cache_write": 200})
        );
    }
}

#[test]
fn an_anthropic_stream_is_metered_from_its_own_usage_and_the_usage_chunk_stays_stripped() {
    let gw = Gateway::shared();
    let (t, _mock) = priced(
        gw,
        "ant-stream",
        "anthropic",
        json!({"input_price_per_mtok": 1}),
    );
    let mut body = chat_body("m");
    body["stream"] = json!(true);
    let r = t.post_with("/v1/chat/completions", &body, &[]);
    assert_eq!(r.status, 200);
    assert!(r.text.ends_with("data: [DONE]\n\n"), "{}", r.text);
    assert!(!r.text.contains("\"usage\""), "not asked for: {}", r.text);
    // The mock's Messages stream: 5 input tokens at message_start, 7 output at message_delta.
    let rec = &gw.usage_records(&t.id, 1, Duration::from_secs(10))[0];
    assert_eq!(
        rec["tokens"],
        json!({"prompt": 5, "completion": 7, "cached": 0})
    );
    // A native Messages stream is metered from its events too.
    let body = json!({"model": "m", "max_tokens": 10, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/messages", &body, &[]);
    assert!(r.text.contains("message_stop"), "{}", r.text);
    let rec = &gw.usage_records(&t.id, 2, Duration::from_secs(10))[1];
    assert_eq!(
        rec["tokens"],
        json!({"prompt": 5, "completion": 7, "cached": 0})
    );
}

#[test]
fn the_messages_responses_and_embeddings_surfaces_carry_the_cost_header_too() {
    let gw = Gateway::shared();
    let (t, _mock) = priced(
        gw,
        "surfaces-cost",
        "openai",
        json!({"input_price_per_mtok": 1, "output_price_per_mtok": 1}),
    );
    // The mock's embeddings report 3 prompt tokens.
    let surfaces = [
        (
            "/v1/messages",
            json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}),
            "0.000012",
        ),
        (
            "/v1/responses",
            json!({"model": "m", "input": "hi"}),
            "0.000012",
        ),
        (
            "/v1/embeddings",
            json!({"model": "m", "input": "hi"}),
            "0.000003",
        ),
    ];
    for (path, body, cost) in surfaces {
        let r = t.post_with(path, &body, &[]);
        assert_eq!(
            (r.status, r.header("x-cognigate-cost-usd")),
            (200, Some(cost)),
            "{path}: {}",
            r.text
        );
    }
    let recs = gw.usage_records(&t.id, 3, Duration::from_secs(10));
    assert_eq!(
        recs[2]["tokens"],
        json!({"prompt": 3, "completion": 0, "cached": 0})
    );
}

#[test]
fn an_exhausted_request_is_recorded_with_zero_cost_and_unknown_tokens() {
    let gw = Gateway::shared();
    let (t, mock) = priced(
        gw,
        "exhausted-usage",
        "openai",
        json!({"input_price_per_mtok": 1}),
    );
    mock.set_default(Reply::status(500));
    let r = t.post_with("/v1/chat/completions", &chat_body("m"), &[]);
    assert_eq!(r.status, 502);
    assert_eq!(r.header("x-cognigate-cost-usd"), None);
    let rec = &gw.usage_records(&t.id, 1, Duration::from_secs(10))[0];
    assert_eq!(rec["outcome"], "exhausted");
    assert_eq!(rec["cost_usd"], 0.0);
    assert!(
        rec["tokens"].is_null() && rec["served_model"].is_null(),
        "{rec}"
    );
}
