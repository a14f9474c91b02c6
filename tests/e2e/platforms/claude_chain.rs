//! "Claude on Anthropic, then on Bedrock, then on Vertex": one chain whose first two members fail
//! over, streamed and not, from the official OpenAI and Anthropic SDKs. Each member answers in its
//! own platform's way (an Anthropic 529, a Bedrock `ServiceUnavailableException` with its signed
//! call checked by botocore, Vertex behind a verified service-account token).

use super::vertex;
use crate::support::gateway::Gateway;
use crate::support::python_mock::PythonMock;
use crate::support::sdk::{anthropic_sdk, openai_sdk};
use cognigate::mock::{MockProvider, Reply};
use serde_json::{json, Value};

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

fn model(provider: &str, upstream: &str) -> Value {
    json!({"provider": provider, "upstream_model": upstream, "context_window": 200000,
        "input_price_per_mtok": 3, "output_price_per_mtok": 15})
}

#[test]
fn claude_fails_over_from_anthropic_to_bedrock_to_vertex_from_both_sdks_streamed_and_not() {
    let gw = Gateway::shared();
    let t = gw.tenant("claude-chain");
    let direct = MockProvider::start("claude-direct").unwrap();
    direct.set_default(Reply::json(529, OVERLOADED));
    t.put_ok(
        "/providers/an",
        json!({"kind": "anthropic", "base_url": direct.url(), "keys": ["sk-ant-1"], "timeout_ms": 5000}),
    );
    t.put_ok("/models/claude-direct", model("an", "claude-sonnet-4-5"));
    let bedrock = PythonMock::start(
        "bedrock_mock.py",
        &json!({"credentials": {"AKID1": "secret-one"}}),
    );
    bedrock.script(json!({"times": 1000, "error": "ServiceUnavailableException"}));
    t.put_ok(
        "/providers/br",
        json!({"kind": "bedrock", "base_url": bedrock.url(), "region": "us-east-1",
            "keys": ["AKID1:secret-one"], "timeout_ms": 5000}),
    );
    t.put_ok(
        "/models/claude-bedrock",
        model("br", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
    );
    let vx = vertex::mock();
    let keys = [vertex::account(&vx, false)];
    vertex::provider(&t, &vx, ("vx", "claude-vertex"), "anthropic", &keys);
    t.rule(
        "claude",
        &["claude-direct", "claude-bedrock", "claude-vertex"],
    );

    let mut answers = Vec::new();
    for stream in [&[][..], &["stream"][..]] {
        answers.push(openai_sdk(&t, "claude", "chat_platform", stream));
    }
    for scenario in ["plain", "stream"] {
        answers.push(anthropic_sdk(&t, "claude", scenario));
    }
    for v in &answers {
        assert_eq!(v["platform"], "vertex", "{v}");
        assert!(
            v["text"].as_str().unwrap_or("").contains("on Vertex."),
            "{v}"
        );
    }
    assert_eq!(answers[0]["fallback-depth"], "2", "{}", answers[0]);
    assert_eq!(answers[2]["depth"], "2", "{}", answers[2]);
    assert!(direct.count() >= 1);
    let signed = bedrock.calls();
    assert!(
        !signed.is_empty() && signed.iter().all(|c| c["refused"].is_null()),
        "{signed:?}"
    );
}
