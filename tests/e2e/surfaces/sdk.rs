//! Every client speaks to it: the official `anthropic` and `openai` Python
//! SDKs drive the Messages, Responses, embeddings and models surfaces through the one cascade.
//! Each Anthropic SDK scenario runs once with an Anthropic mock serving and once with an OpenAI
//! mock serving.

use crate::support::gateway::{Gateway, Tenant};
use crate::support::sdk::{anthropic_sdk, openai_sdk};
use cognigate::mock::{MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Anthropic,
    Openai,
}

const KINDS: [Kind; 2] = [Kind::Anthropic, Kind::Openai];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
        }
    }
}

/// A tenant whose model `serve` is on a mock of `kind` (upstream name `up-serve`), plus a model
/// `down` on an OpenAI mock that answers 500, and the rule `chain` = [down, serve].
fn setup<'g>(gw: &'g Gateway, hint: &str, kind: Kind) -> (Tenant<'g>, MockProvider, MockProvider) {
    let t = gw.tenant(hint);
    let mock = MockProvider::start(hint).unwrap();
    t.put_ok(
        "/providers/serving",
        json!({"kind": kind.name(), "base_url": mock.url(), "keys": ["sk-serve"], "timeout_ms": 5000}),
    );
    t.put_ok(
        "/models/serve",
        json!({"provider": "serving", "upstream_model": "up-serve", "context_window": 100000,
               "input_price_per_mtok": 1, "output_price_per_mtok": 1}),
    );
    let down = MockProvider::start("down").unwrap();
    down.set_default(Reply::status(500));
    t.provider("broken", &down.url(), &["sk-down"], "round_robin");
    t.model("down", "broken", 1.0, 100000);
    assert_eq!(t.rule("chain", &["down", "serve"]).status, 200);
    (t, mock, down)
}

fn hello(hint: &str) -> String {
    format!("Hello from {hint}, model up-serve.")
}

#[test]
fn the_anthropic_sdk_sends_a_plain_message_through_either_family() {
    let gw = Gateway::shared();
    for kind in KINDS {
        let hint = format!("sdk-plain-{}", kind.name());
        let (t, mock, _down) = setup(gw, &hint, kind);
        let out = anthropic_sdk(&t, "serve", "plain");
        assert_eq!(out["text"], hello(&hint), "{kind:?}");
        assert_eq!(
            (out["type"].clone(), out["stop_reason"].clone()),
            (json!("message"), json!("end_turn"))
        );
        assert_eq!(out["usage"]["input_tokens"], 5);
        assert!(
            out["request_id"].as_str().unwrap().starts_with("req_"),
            "{out}"
        );
        let call = &mock.calls()[0];
        match kind {
            Kind::Anthropic => {
                assert_eq!(call.path, "/v1/messages");
                assert_eq!(
                    call.body["system"], "Be brief.",
                    "sent as the caller wrote it"
                );
                assert_eq!(call.body["max_tokens"], 256);
            }
            Kind::Openai => {
                assert_eq!(call.path, "/v1/chat/completions");
                assert_eq!(
                    call.body["messages"][0],
                    json!({"role": "system", "content": "Be brief."})
                );
            }
        }
        assert_eq!(call.body["model"], "up-serve");
    }
}

#[test]
fn the_anthropic_sdk_reads_a_streamed_message_to_the_end_through_either_family() {
    let gw = Gateway::shared();
    for kind in KINDS {
        let hint = format!("sdk-stream-{}", kind.name());
        let (t, _mock, _down) = setup(gw, &hint, kind);
        let out = anthropic_sdk(&t, "serve", "stream");
        assert_eq!(out["text"], hello(&hint), "{kind:?} {out}");
        assert_eq!(out["final_text"], hello(&hint));
        assert_eq!(out["stop_reason"], "end_turn");
        assert_eq!(out["output_tokens"], 7, "usage arrives in message_delta");
    }
}

fn tool_reply(kind: Kind) -> Reply {
    match kind {
        Kind::Anthropic => Reply::json(200, &json!({"id": "msg_t", "type": "message", "role": "assistant", "model": "up-serve",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}],
            "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 5, "output_tokens": 7}}).to_string()),
        Kind::Openai => Reply::json(200, &json!({"id": "chatcmpl-t", "object": "chat.completion", "created": 1, "model": "up-serve",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}}).to_string()),
    }
}

#[test]
fn the_anthropic_sdk_completes_a_tool_use_round_trip_through_either_family() {
    let gw = Gateway::shared();
    for kind in KINDS {
        let hint = format!("sdk-tools-{}", kind.name());
        let (t, mock, _down) = setup(gw, &hint, kind);
        mock.push(Rule::any(tool_reply(kind)).times(1));
        let out = anthropic_sdk(&t, "serve", "tools");
        assert_eq!(out["stop_reason"], "tool_use", "{kind:?} {out}");
        assert_eq!(
            (out["tool_name"].clone(), out["tool_input"].clone()),
            (json!("get_weather"), json!({"city": "Oslo"}))
        );
        assert_eq!(out["final_text"], hello(&hint));
        let second = &mock.calls()[1].body;
        match kind {
            Kind::Anthropic => {
                assert_eq!(second["messages"][2]["content"][0]["type"], "tool_result");
                assert_eq!(
                    second["tools"][0]["input_schema"]["required"],
                    json!(["city"])
                );
            }
            Kind::Openai => {
                assert_eq!(second["messages"][1]["tool_calls"][0]["id"], "toolu_1");
                assert_eq!(
                    second["messages"][2],
                    json!({"role": "tool", "tool_call_id": "toolu_1", "content": "rain"})
                );
                assert_eq!(second["tools"][0]["function"]["name"], "get_weather");
            }
        }
    }
}

#[test]
fn the_anthropic_sdk_is_served_at_depth_1_when_the_first_candidate_fails() {
    let gw = Gateway::shared();
    for kind in KINDS {
        let hint = format!("sdk-failover-{}", kind.name());
        let (t, _mock, down) = setup(gw, &hint, kind);
        let out = anthropic_sdk(&t, "chain", "plain");
        assert_eq!(
            (out["text"].clone(), out["depth"].clone()),
            (json!(hello(&hint)), json!("1")),
            "{kind:?} {out}"
        );
        let out = anthropic_sdk(&t, "chain", "stream");
        assert_eq!(
            (out["text"].clone(), out["depth"].clone()),
            (json!(hello(&hint)), json!("1")),
            "{kind:?} {out}"
        );
        assert_eq!(down.count(), 2, "the first candidate was asked each time");
    }
}

#[test]
fn the_openai_sdk_creates_responses_streamed_and_not() {
    let gw = Gateway::shared();
    for kind in KINDS {
        let hint = format!("sdk-resp-{}", kind.name());
        let (t, _mock, _down) = setup(gw, &hint, kind);
        let out = openai_sdk(&t, "serve", "responses", &[]);
        assert_eq!(
            (out["object"].clone(), out["status"].clone()),
            (json!("response"), json!("completed")),
            "{out}"
        );
        assert_eq!(
            (out["text"].clone(), out["usage"].clone()),
            (json!(hello(&hint)), json!(12))
        );
        let out = openai_sdk(&t, "chain", "responses_stream", &[]);
        assert_eq!(out["text"], hello(&hint), "{kind:?} {out}");
        assert_eq!(out["final_text"], hello(&hint));
        let events: Vec<&str> = out["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(events.first(), Some(&"response.created"));
        assert_eq!(events.last(), Some(&"response.completed"));
        for e in [
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_item.done",
        ] {
            assert!(events.contains(&e), "{e}: {events:?}");
        }
    }
}

#[test]
fn the_openai_sdk_completes_a_function_call_round_trip_on_responses_streamed_and_not() {
    let gw = Gateway::shared();
    let (t, mock, _down) = setup(gw, "sdk-resp-tools", Kind::Openai);
    mock.push(Rule::any(tool_reply(Kind::Openai)).times(1));
    let out = openai_sdk(&t, "serve", "responses_tools", &[]);
    assert_eq!(
        (out["name"].clone(), out["arguments"].clone()),
        (json!("get_weather"), json!({"city": "Oslo"})),
        "{out}"
    );
    assert_eq!(out["final_text"], hello("sdk-resp-tools"));
    let second = &mock.calls()[1].body;
    assert_eq!(second["messages"][1]["tool_calls"][0]["id"], "toolu_1");
    assert_eq!(
        second["messages"][2],
        json!({"role": "tool", "tool_call_id": "toolu_1", "content": "rain"})
    );
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "up-serve",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    mock.push(Rule::any(Reply::stream(vec![
        Step::Data(chunk(json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_9", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}), Value::Null)),
        Step::Data(chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}), Value::Null)),
        Step::Data(chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"Oslo\"}"}}]}), json!("tool_calls"))),
        Step::Data("[DONE]".into()),
    ])).times(1));
    let out = openai_sdk(&t, "serve", "responses_tools", &["stream"]);
    assert_eq!(
        (out["call_id"].clone(), out["arguments"].clone()),
        (json!("call_9"), json!({"city": "Oslo"})),
        "{out}"
    );
}

#[test]
fn the_openai_sdk_embeds_through_an_alias_with_failover_and_anthropic_is_skipped_as_unsupported() {
    let gw = Gateway::shared();
    let (t, mock, down) = setup(gw, "sdk-embed", Kind::Openai);
    let ant = MockProvider::start("ant-embed").unwrap();
    t.put_ok(
        "/providers/ant",
        json!({"kind": "anthropic", "base_url": ant.url(), "keys": ["sk-a"], "timeout_ms": 5000}),
    );
    let caps = json!(["embeddings"]);
    for (id, provider, price) in [
        ("claude-embed", "ant", 0.1),
        ("embed-down", "broken", 0.2),
        ("embed-good", "serving", 0.3),
    ] {
        t.put_ok(
            &format!("/models/{id}"),
            json!({"provider": provider, "context_window": 8000, "capabilities": caps,
            "input_price_per_mtok": price, "output_price_per_mtok": price}),
        );
    }
    // The alias takes the best embeddings model; the rule puts two failing candidates before it.
    t.put_ok(
        "/aliases/vectors",
        json!({"capabilities": ["embeddings"], "cost_tier": "best"}),
    );
    assert_eq!(
        t.rule("embed", &["claude-embed", "embed-down", "vectors"])
            .status,
        200
    );
    let out = openai_sdk(&t, "embed", "embeddings", &[]);
    assert_eq!(
        (
            out["count"].clone(),
            out["dims"].clone(),
            out["depth"].clone()
        ),
        (json!(1), json!(3), json!("2")),
        "{out}"
    );
    assert_eq!(
        ant.count(),
        0,
        "an Anthropic candidate is skipped without a call"
    );
    assert_eq!(down.calls()[0].path, "/v1/embeddings");
    let served = mock.calls();
    assert_eq!(
        (served[0].path.as_str(), served[0].body["input"].clone()),
        ("/v1/embeddings", json!("hello"))
    );
    let log = gw.log_containing(r#""surface":"embeddings""#);
    let line = log
        .lines()
        .rev()
        .find(|l| l.contains(r#""surface":"embeddings""#))
        .unwrap();
    assert!(line.contains(r#""failure":"unsupported""#), "{line}");
}

#[test]
fn the_openai_sdk_retrieves_a_model_and_every_created_is_real() {
    let gw = Gateway::shared();
    let (t, _mock, _down) = setup(gw, "sdk-models", Kind::Openai);
    let out = openai_sdk(&t, "serve", "retrieve", &[]);
    assert_eq!(out["id"], "serve");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let created = out["created"].as_u64().unwrap();
    assert!(
        created > now - 600 && created <= now + 5,
        "{created} vs {now}"
    );
    for c in out["listed_created"].as_array().unwrap() {
        assert!(c.as_u64().unwrap() > now - 600, "{out}");
    }
}

#[test]
fn with_raw_response_shows_x_request_id_equal_to_the_cognigate_request_id() {
    let gw = Gateway::shared();
    let (t, _mock, _down) = setup(gw, "sdk-raw", Kind::Openai);
    let out = openai_sdk(&t, "serve", "raw", &[]);
    let id = out["x_request_id"].as_str().unwrap();
    assert!(id.starts_with("req_"), "{out}");
    assert_eq!(
        (
            out["cognigate_request_id"].as_str(),
            out["request_id"].as_str()
        ),
        (Some(id), Some(id))
    );
}
