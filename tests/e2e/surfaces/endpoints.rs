//! The Messages, Responses and embeddings surfaces over raw HTTP: what each family receives, the
//! error shape per surface (the 502 with `attempts` included), and a stream that fails after its
//! first event.

use crate::support::gateway::{agent, header_list, Gateway, Resp, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};

fn post(gw: &Gateway, path: &str, headers: &[(&str, &str)], body: &Value) -> Resp {
    let mut req = ureq::http::Request::builder()
        .method("POST")
        .uri(format!("{}{path}", gw.url))
        .header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut resp = agent().run(req.body(body.to_string()).unwrap()).unwrap();
    let (status, headers) = (resp.status().as_u16(), header_list(&resp));
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    Resp {
        status,
        headers,
        text,
    }
}

fn anthropic_tenant<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.put_ok("/providers/ant", json!({"kind": "anthropic", "base_url": mock.url(), "keys": ["sk-ant"], "timeout_ms": 5000}));
    t.put_ok(
        "/models/claude",
        json!({"provider": "ant", "upstream_model": "claude-up", "context_window": 200000,
        "input_price_per_mtok": 3, "output_price_per_mtok": 15}),
    );
    (t, mock)
}

#[test]
fn an_anthropic_provider_receives_the_messages_body_with_only_the_model_replaced_and_anthropic_beta(
) {
    let gw = Gateway::shared();
    let (t, mock) = anthropic_tenant(gw, "msg-native");
    let body = json!({"model": "claude", "max_tokens": 2000, "top_k": 5, "metadata": {"user_id": "u1"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "text", "text": "a"}]},
            {"role": "user", "content": [{"type": "text", "text": "q2", "cache_control": {"type": "ephemeral"}}]}]});
    let r = post(
        gw,
        "/v1/messages",
        &[
            ("x-api-key", &t.key),
            ("anthropic-version", "2023-06-01"),
            ("anthropic-beta", "prompt-caching-2024-07-31"),
        ],
        &body,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json()["type"], "message");
    let call = &mock.calls()[0];
    let mut expected = body.clone();
    expected["model"] = json!("claude-up");
    assert_eq!(call.body, expected, "only the model is replaced");
    assert_eq!(
        call.header("anthropic-beta"),
        Some("prompt-caching-2024-07-31")
    );
    assert_eq!(
        call.header("x-api-key"),
        Some("sk-ant"),
        "the provider's key, never the caller's"
    );
    let log = gw.log_containing(r#""surface":"messages""#);
    assert!(log.contains(r#""surface":"messages""#));
}

#[test]
fn messages_errors_come_in_anthropics_shape_with_the_chat_surfaces_statuses() {
    let gw = Gateway::shared();
    let (t, mock) = anthropic_tenant(gw, "msg-errors");
    let ok = json!({"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]});
    let key = [("x-api-key", t.key.as_str())];
    let cases = [
        (
            post(gw, "/v1/messages", &[("x-api-key", "cg_wrong")], &ok),
            401,
            "authentication_error",
        ),
        (
            post(
                gw,
                "/v1/messages",
                &key,
                &json!({"model": "nope", "max_tokens": 10, "messages": []}),
            ),
            404,
            "not_found_error",
        ),
        (
            post(
                gw,
                "/v1/messages",
                &key,
                &json!({"model": "claude", "messages": []}),
            ),
            400,
            "invalid_request_error",
        ),
    ];
    for (r, status, kind) in cases {
        assert_eq!(r.status, status, "{}", r.text);
        let v = r.json();
        assert_eq!(
            (v["type"].clone(), v["error"]["type"].clone()),
            (json!("error"), json!(kind)),
            "{v}"
        );
        assert!(v["error"]["message"].is_string());
        assert_eq!(r.header("x-request-id"), r.header("x-cognigate-request-id"));
    }
    // A provider's own 429 on its only key: the aggregated 502 keeps `attempts` inside `error`.
    mock.set_default(Reply::json(
        429,
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
    ));
    let r = post(gw, "/v1/messages", &key, &ok);
    assert_eq!(r.status, 502, "{}", r.text);
    let v = r.json();
    assert_eq!(
        (v["type"].clone(), v["error"]["type"].clone()),
        (json!("error"), json!("api_error"))
    );
    assert_eq!(
        v["error"]["attempts"],
        json!([{"provider": "ant", "model": "claude", "failure": "rate_limit", "status": 429}])
    );
    // The same on the chat surface stays in OpenAI's shape.
    let r = t.chat("claude");
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (502, json!("upstream_exhausted"))
    );
    // A refusal before routing (wrong method) is in the surface's shape too.
    let r = gw.request("GET", "/v1/messages", Some(&t.key), None);
    assert_eq!(
        (r.status, r.json()["error"]["type"].clone()),
        (405, json!("invalid_request_error"))
    );
    assert_eq!(r.json()["type"], "error");
}

#[test]
fn responses_refuses_state_with_a_400_that_says_why_and_embeddings_errors_stay_openai_shaped() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("resp-refuse", &["sk-1"], "round_robin");
    let auth = format!("Bearer {}", t.key);
    let h = [("authorization", auth.as_str())];
    for (body, param) in [
        (
            json!({"model": "m", "input": "x", "previous_response_id": "resp_1"}),
            "previous_response_id",
        ),
        (json!({"model": "m", "input": "x", "store": true}), "store"),
        (
            json!({"model": "m", "input": "x", "tools": [{"type": "web_search_preview"}]}),
            "tools",
        ),
    ] {
        let r = post(gw, "/v1/responses", &h, &body);
        assert_eq!(r.status, 400, "{}", r.text);
        let e = &r.json()["error"];
        assert_eq!(e["param"], param);
        assert!(
            e["message"].as_str().unwrap().contains("not supported"),
            "{e}"
        );
    }
    let r = post(gw, "/v1/embeddings", &h, &json!({"model": "m"}));
    assert_eq!(
        (r.status, r.json()["error"]["param"].clone()),
        (400, json!("input"))
    );
}

fn read_stream(gw: &Gateway, path: &str, key: &str, body: &Value) -> String {
    let auth = format!("Bearer {key}");
    let r = post(gw, path, &[("authorization", &auth)], body);
    assert_eq!(r.status, 200, "{}", r.text);
    r.text
}

#[test]
fn a_messages_stream_that_fails_after_its_first_event_ends_with_an_anthropic_error_event() {
    let gw = Gateway::shared();
    let (t, mock) = anthropic_tenant(gw, "msg-cut");
    let start = json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-up",
        "content": [], "stop_reason": null, "usage": {"input_tokens": 5, "output_tokens": 1}}});
    mock.push(Rule::any(Reply::stream(vec![
        Step::Raw(format!("event: message_start\ndata: {start}\n\n")),
        Step::Cut,
    ])));
    let body = json!({"model": "claude", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": "x"}]});
    let text = read_stream(gw, "/v1/messages", &t.key, &body);
    assert!(text.starts_with("event: message_start"), "{text}");
    assert!(
        text.trim_end()
            .rsplit("\n\n")
            .next()
            .unwrap()
            .starts_with("event: error\ndata: "),
        "{text}"
    );
    assert!(!text.contains("[DONE]"));
    // From an OpenAI-compatible provider the same failure reads the same.
    let (t, mock) = gw.tenant_with_mock("msg-cut-oai", &["sk-1"], "round_robin");
    mock.push(Rule::any(Reply::stream(vec![
        Step::Data(cognigate::mock::chunk_event("m", "Hi")),
        Step::Cut,
    ])));
    let text = read_stream(
        gw,
        "/v1/messages",
        &t.key,
        &json!({"model": "m", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": "x"}]}),
    );
    assert!(text.starts_with("event: message_start"), "{text}");
    assert!(
        text.contains(r#""text_delta","text":"Hi""#)
            || text.contains(r#""text":"Hi","type":"text_delta""#),
        "{text}"
    );
    let last = text.trim_end().rsplit("\n\n").next().unwrap();
    assert!(last.starts_with("event: error\ndata: "), "{text}");
    let data: Value = serde_json::from_str(last.split_once("data: ").unwrap().1).unwrap();
    assert_eq!(
        (data["type"].clone(), data["error"]["type"].clone()),
        (json!("error"), json!("api_error"))
    );
}
