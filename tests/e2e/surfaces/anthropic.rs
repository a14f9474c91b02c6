//! Anthropic as a provider kind, end to end: OpenAI-shaped requests in, a strict Messages API mock
//! upstream, OpenAI-shaped answers out.

use crate::support::gateway::{Gateway, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};

fn anthropic<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.anthropic_claude(&mock.url(), json!({}));
    (t, mock)
}

fn chat(t: &Tenant<'_>, body: Value) -> crate::support::gateway::Resp {
    t.gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&t.key),
        Some(&body.to_string()),
    )
}

#[test]
fn an_openai_shaped_request_is_served_by_the_messages_api() {
    let gw = Gateway::shared();
    let (t, mock) = anthropic(gw, "ant-basic");
    let r = chat(
        &t,
        json!({"model": "claude", "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-provider"), Some("anthropic"));
    let body = r.json();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["role"], "assistant");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "Hello from ant-basic, model claude-sonnet-4-5."
    );
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["usage"]["total_tokens"], 12);
    let call = &mock.calls()[0];
    assert_eq!(call.path, "/v1/messages");
    assert_eq!(call.header("x-api-key"), Some("sk-ant-1"));
    assert_eq!(call.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(call.header("authorization"), None);
    assert_eq!(
        call.body["max_tokens"], 1024,
        "the model's configured default"
    );
    assert_eq!(call.body["system"], "Be brief.");
}

#[test]
fn the_strict_mock_refuses_what_the_real_api_refuses() {
    // Without this, the failover test below could pass against a mock that accepts anything.
    let mock = MockProvider::start("strict").unwrap();
    let send = |headers: &[(&str, &str)], body: Value| {
        let mut req = ureq::http::Request::builder()
            .method("POST")
            .uri(format!("{}/messages", mock.url()));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = crate::support::gateway::agent()
            .run(req.body(body.to_string()).unwrap())
            .unwrap();
        (
            resp.status().as_u16(),
            resp.body_mut().read_to_string().unwrap(),
        )
    };
    let ok_headers = [("x-api-key", "k"), ("anthropic-version", "2023-06-01")];
    let good =
        json!({"model": "c", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(send(&ok_headers, good.clone()).0, 200);
    assert_eq!(
        send(&[("anthropic-version", "2023-06-01")], good.clone()).0,
        401
    );
    assert_eq!(send(&[("x-api-key", "k")], good.clone()).0, 400);
    assert_eq!(
        send(&ok_headers, json!({"model": "c", "messages": []})).0,
        400
    );
    let replayed = json!({"model": "c", "max_tokens": 10, "messages": [
        {"role": "assistant", "content": "a", "reasoning_content": "thoughts"}]});
    let (status, text) = send(&ok_headers, replayed);
    assert_eq!(status, 400);
    assert!(text.contains("reasoning_content"));
}

#[test]
fn an_openai_to_anthropic_chain_fails_over_mid_conversation_with_reasoning_in_history() {
    let gw = Gateway::shared();
    let (t, ant) = anthropic(gw, "ant-chain");
    let oai = MockProvider::start("openai-reasoner").unwrap();
    t.provider("deepseek", &oai.url(), &["sk-ds"], "failover");
    let r = t.put("/models/reasoner", json!({"provider": "deepseek", "capabilities": ["chat", "reasoning"], "context_window": 64000}));
    assert_eq!(r.status, 200);
    assert_eq!(t.rule("think", &["reasoner", "claude"]).status, 200);
    oai.push(Rule::any(Reply::status(503)));
    let r = chat(
        &t,
        json!({"model": "think", "reasoning_effort": "low", "temperature": 0.7, "messages": [
        {"role": "user", "content": "Is 97 prime?"},
        {"role": "assistant", "content": "Yes.", "reasoning_content": "Check divisors up to 9."},
        {"role": "user", "content": "And 91?"}]}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("claude"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
    // Even the OpenAI-family attempt gets no replayed reasoning: such APIs refuse it back.
    assert_eq!(
        oai.calls()[0].body["messages"][1].get("reasoning_content"),
        None,
        "stripped for OpenAI targets too"
    );
    assert_eq!(oai.calls()[0].body["reasoning_effort"], "low");
    let sent = &ant.calls()[0].body;
    assert_eq!(
        sent["messages"][1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Yes."}]})
    );
    assert_eq!(
        sent["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(
        sent.get("temperature"),
        None,
        "no sampling override alongside thinking"
    );
    assert!(sent["max_tokens"].as_u64().unwrap() > 2048);
}

#[test]
fn anthropic_failures_are_classified_like_any_provider() {
    let gw = Gateway::shared();
    let (t, ant) = anthropic(gw, "ant-fail");
    let backup = MockProvider::start("backup").unwrap();
    t.provider("backup", &backup.url(), &["sk-b"], "failover");
    t.model("backup-model", "backup", 1.0, 8000);
    assert_eq!(t.rule("c", &["claude", "backup-model"]).status, 200);
    ant.push(
        Rule::any(Reply::json(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ))
        .times(1),
    );
    let r = chat(
        &t,
        json!({"model": "c", "messages": [{"role": "user", "content": "x"}]}),
    );
    assert_eq!(
        (r.status, r.header("x-cognigate-model")),
        (200, Some("backup-model"))
    );
    ant.push(Rule::any(Reply::json(400, r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}"#)).times(1));
    let r = chat(
        &t,
        json!({"model": "c", "messages": [{"role": "user", "content": "x"}]}),
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["type"], "invalid_request_error");
    assert_eq!(
        r.json()["error"]["message"],
        "prompt is too long: 250000 tokens > 200000 maximum"
    );
    assert_eq!(backup.count(), 1, "a request-caused 400 does not cascade");
}

#[test]
fn a_streamed_anthropic_answer_is_read_to_the_end_by_the_official_openai_client() {
    let gw = Gateway::shared();
    let (t, ant) = anthropic(gw, "ant-stream");
    let line = gw.openai_sdk_stream(&t.key, "claude");
    assert_eq!(line["ok"], true, "{line}");
    assert_eq!(
        line["text"],
        "Hello from ant-stream, model claude-sonnet-4-5."
    );
    assert_eq!(line["usage"]["completion_tokens"], 7);
    assert_eq!(ant.calls()[0].body["stream"], true);
}
