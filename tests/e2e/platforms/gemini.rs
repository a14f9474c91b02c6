//! The Gemini API end to end against a mock held to its wire rules (`x-goog-api-key`, `alt=sse`,
//! roles, object-shaped function responses, CRLF streams without `[DONE]`): served streamed and
//! not, tool calls round-tripped with their thought signatures, and Google's errors read by
//! their reason.

use crate::support::gateway::{Gateway, Resp, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};

fn tenant<'g>(gw: &'g Gateway, hint: &str, keys: &[&str]) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.put_ok(
        "/providers/gm",
        json!({"kind": "gemini", "base_url": format!("http://127.0.0.1:{}/v1beta", mock.port()),
            "keys": keys, "key_strategy": "failover", "timeout_ms": 5000}),
    );
    t.put_ok(
        "/models/gem",
        json!({"provider": "gm", "upstream_model": "gemini-2.5-flash", "context_window": 1000000,
            "input_price_per_mtok": 0.3, "output_price_per_mtok": 2.5}),
    );
    (t, mock)
}

fn post(t: &Tenant<'_>, body: Value) -> Resp {
    t.post_with("/v1/chat/completions", &body, &[])
}

#[test]
fn gemini_is_served_streamed_and_not_with_the_key_in_x_goog_api_key() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "gemini-wire", &["AIzaKeyOne0000000"]);
    let msgs =
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]);
    let r = post(&t, json!({"model": "gem", "messages": msgs}));
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.json();
    assert!(v["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or("")
        .starts_with("Hello from"));
    assert_eq!(v["usage"]["prompt_tokens"], 5);
    assert_eq!(r.header("x-cognigate-platform"), Some("direct"));
    let r = post(
        &t,
        json!({"model": "gem", "messages": msgs, "stream": true,
        "stream_options": {"include_usage": true}}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.ends_with("data: [DONE]\n\n"), "{}", r.text);
    assert!(r.text.contains("\"prompt_tokens\":5"), "{}", r.text);
    let calls = mock.calls();
    assert_eq!(
        calls[0].path,
        "/v1beta/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(
        calls[1].path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(calls[0].header("x-goog-api-key"), Some("AIzaKeyOne0000000"));
    assert_eq!(
        calls[0].body["systemInstruction"]["parts"][0]["text"],
        "be brief"
    );
}

#[test]
fn gemini_tool_calls_round_trip_with_their_thought_signatures() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "gemini-tools", &["AIzaKeyOne0000000"]);
    let call = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": "c2lnbmF0dXJlLzE+"}]},
        "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 3},
        "responseId": "resp1"});
    mock.push(Rule::any(Reply::json(200, &call.to_string())).times(1));
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"city": {"type": "string"}}}}}]);
    let ask = json!({"role": "user", "content": "weather in Oslo?"});
    let r = post(
        &t,
        json!({"model": "gem", "messages": [ask], "tools": tools}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.json();
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    let tool_call = v["choices"][0]["message"]["tool_calls"][0].clone();
    assert_eq!(tool_call["function"]["name"], "get_weather");
    let id = tool_call["id"].as_str().unwrap().to_owned();
    let history = json!([ask, {"role": "assistant", "content": null, "tool_calls": [tool_call]},
        {"role": "tool", "tool_call_id": id, "content": "sunny"}]);
    let r = post(
        &t,
        json!({"model": "gem", "messages": history, "tools": tools}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let sent = &mock.calls()[1].body;
    let parts = &sent["contents"][1]["parts"];
    assert_eq!(parts[0]["functionCall"]["name"], "get_weather");
    assert_eq!(parts[0]["thoughtSignature"], "c2lnbmF0dXJlLzE+");
    let response = &sent["contents"][2]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "get_weather");
    assert!(response["response"].is_object(), "{response}");
}

#[test]
fn a_gemini_429_parks_the_key_and_an_invalid_key_rotates() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(
        gw,
        "gemini-errors",
        &[
            "bad-key-000000000",
            "AIzaKeyTwo0000000",
            "AIzaKeyThree00000",
        ],
    );
    let exhausted = json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}]}});
    mock.push(
        Rule::any(Reply::json(429, &exhausted.to_string()))
            .key("AIzaKeyTwo0000000")
            .times(1),
    );
    let msgs = json!([{"role": "user", "content": "hi"}]);
    assert_eq!(
        post(&t, json!({"model": "gem", "messages": msgs})).status,
        200
    );
    assert_eq!(
        post(&t, json!({"model": "gem", "messages": msgs})).status,
        200
    );
    let keys = mock.keys();
    assert_eq!(
        keys,
        [
            "bad-key-000000000",
            "AIzaKeyTwo0000000",
            "AIzaKeyThree00000",
            "bad-key-000000000",
            "AIzaKeyThree00000"
        ],
        "the invalid key rotates each time; the exhausted one sits out its retryDelay"
    );
}

#[test]
fn gemini_embeddings_go_through_batch_embed_contents_in_openais_shape() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "gemini-embed", &["AIzaKeyOne0000000"]);
    let body = json!({"model": "gem", "input": ["first", "second"], "dimensions": 3});
    let r = t.post_with("/v1/embeddings", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.json();
    assert_eq!(
        (v["object"].as_str(), v["model"].as_str()),
        (Some("list"), Some("gem"))
    );
    assert_eq!(v["data"][1]["index"], 1);
    assert_eq!(v["data"][0]["embedding"], json!([0.125, 0.125, 0.125]));
    let calls = mock.calls();
    assert_eq!(
        calls[0].path,
        "/v1beta/models/gemini-2.5-flash:batchEmbedContents"
    );
    assert_eq!(
        calls[0].body["requests"][1]["content"]["parts"][0]["text"],
        "second"
    );
    // Token arrays have no Gemini form: the candidate is skipped like a family that cannot serve
    // the surface, never sent a broken batch.
    let tokens = json!({"model": "gem", "input": [[1, 2, 3]]});
    let r = t.post_with("/v1/embeddings", &tokens, &[]);
    assert_eq!(
        r.json()["error"]["attempts"][0]["failure"],
        "unsupported",
        "{}",
        r.text
    );
    assert_eq!(mock.count(), 1);
}
