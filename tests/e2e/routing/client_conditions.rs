//! `params.task` and `params.agent` in routing rules end to end: a request routed by the tools
//! it declares and by the client its User-Agent names, validation on write, and `explain`'s
//! `task` and `agent` parameters.

use crate::support::gateway::{Gateway, Resp, Tenant};
use serde_json::{json, Value};

/// Models `m-code`, `m-chat`, `m-claude` and `m-other` on one mock provider.
fn tenant<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, cognigate::mock::MockProvider) {
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1"], "failover");
    for m in ["m-code", "m-chat", "m-claude", "m-other"] {
        t.model(m, "p", 1.0, 8000);
    }
    (t, mock)
}

fn served(r: &Resp) -> String {
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-cognigate-model").unwrap().to_owned()
}

fn messages_body(tools: Value) -> Value {
    json!({"model": "work", "max_tokens": 20, "tools": tools,
        "messages": [{"role": "user", "content": "why does the login page redirect twice?"}]})
}

#[test]
fn a_rule_on_params_task_routes_a_request_declaring_a_coding_tool_as_code() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "task-rule");
    t.put_ok(
        "/routing-rules",
        json!({"name": "work-code", "match": "work", "when": {"params.task": "code"}, "chain": ["m-code"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "work-chat", "match": "work", "priority": 10, "chain": ["m-chat"]}),
    );
    // Claude Code's tools, sent with a plain SDK's User-Agent: the tools decide.
    let coding = json!([{"name": "Bash", "input_schema": {"type": "object"}},
        {"name": "Edit", "input_schema": {"type": "object"}}]);
    let sdk = [("user-agent", "Anthropic/Python 0.64.0")];
    let r = t.post_with("/v1/messages", &messages_body(coding), &sdk);
    assert_eq!(served(&r), "m-code");
    let weather = json!([{"name": "get_weather", "input_schema": {"type": "object"}}]);
    let r = t.post_with("/v1/messages", &messages_body(weather), &sdk);
    assert_eq!(served(&r), "m-chat");
    // A fenced block in the last user turn is code too.
    let body = json!({"model": "work", "messages": [{"role": "user",
        "content": "what is wrong here?\n```python\nprint(1/0)\n```"}]});
    assert_eq!(
        served(&t.post_with("/v1/chat/completions", &body, &[])),
        "m-code"
    );
}

#[test]
fn a_rule_on_params_agent_routes_by_the_user_agent_and_x_stainless_headers_do_not_override_claude_cli(
) {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "agent-rule");
    t.put_ok(
        "/routing-rules",
        json!({"name": "work-claude", "match": "work", "when": {"params.agent": "claude-code"}, "chain": ["m-claude"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "work-other", "match": "work", "priority": 10, "chain": ["m-other"]}),
    );
    let body = messages_body(json!([]));
    let claude_code = [
        ("user-agent", "claude-cli/1.0.83 (external, cli)"),
        ("x-stainless-lang", "js"),
        ("x-stainless-package-version", "0.55.1"),
        ("anthropic-version", "2023-06-01"),
    ];
    assert_eq!(
        served(&t.post_with("/v1/messages", &body, &claude_code)),
        "m-claude"
    );
    let sdk = [
        ("user-agent", "Anthropic/JS 0.60.0"),
        ("x-stainless-lang", "js"),
        ("anthropic-version", "2023-06-01"),
    ];
    assert_eq!(served(&t.post_with("/v1/messages", &body, &sdk)), "m-other");
    // Codex is a coding agent: a rule on `params.task: code` takes its chat whatever it says.
    t.put_ok(
        "/routing-rules",
        json!({"name": "chat-code", "match": "chat", "when": {"params.task": "code"}, "chain": ["m-code"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "chat-rest", "match": "chat", "priority": 10, "chain": ["m-chat"]}),
    );
    let hello = json!({"model": "chat", "messages": [{"role": "user", "content": "hello"}]});
    let codex = [
        (
            "user-agent",
            "codex_cli_rs/0.58.0 (Mac OS 14.6.1; arm64) iTerm.app/3.5.10",
        ),
        ("originator", "codex_cli_rs"),
    ];
    assert_eq!(
        served(&t.post_with("/v1/chat/completions", &hello, &codex)),
        "m-code"
    );
    let python = [("user-agent", "OpenAI/Python 1.99.9")];
    assert_eq!(
        served(&t.post_with("/v1/chat/completions", &hello, &python)),
        "m-chat"
    );
}

#[test]
fn params_task_and_params_agent_are_validated_on_write_and_explain_takes_them() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "task-agent-explain");
    for (when, path) in [
        (json!({"params.task": "poetry"}), "when.params.task"),
        (
            json!({"params.agent": {"$in": ["codex", "cursor"]}}),
            "when.params.agent.$in[1]",
        ),
    ] {
        let r = t.put(
            "/routing-rules",
            json!({"name": "bad", "match": "work", "when": when, "chain": ["m-code"]}),
        );
        assert_eq!(r.status, 400, "{}", r.text);
        assert_eq!(r.json()["error"]["param"], path, "{}", r.text);
    }
    t.put_ok(
        "/routing-rules",
        json!({"name": "work-codex", "match": "work", "when": {"params.agent": "codex"}, "chain": ["m-code"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "work-rest", "match": "work", "priority": 10, "chain": ["m-chat"]}),
    );
    let explain = |q: &str| t.gw.admin("GET", &t.path(&format!("/explain?{q}")), None);
    let codex = explain("model=work&agent=codex").json();
    assert_eq!(
        (&codex["task"], &codex["agent"]),
        (&json!("code"), &json!("codex")),
        "{codex}"
    );
    assert_eq!(codex["candidates"][0]["model"], "m-code", "{codex}");
    let plain = explain("model=work&task=chat").json();
    assert_eq!(
        (&plain["task"], &plain["agent"]),
        (&json!("chat"), &json!("unknown")),
        "{plain}"
    );
    assert_eq!(plain["candidates"][0]["model"], "m-chat", "{plain}");
    let bad = explain("model=work&agent=cursor");
    assert_eq!(
        (bad.status, bad.json()["error"]["param"].clone()),
        (400, json!("agent"))
    );
}
