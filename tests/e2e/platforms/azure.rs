//! Azure OpenAI end to end: the deployment path with `api-version`, the key in `api-key`,
//! `retry-after-ms` over `Retry-After`, and the content filter's two refusals falling back.

use crate::support::gateway::{Gateway, Resp, Tenant};
use crate::support::replies::content_filter;
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::json;
use std::time::Duration;

const VERSION: &str = "2024-10-21";

/// Provider `az` (Azure OpenAI, keys `az-key-1`/`az-key-2`, failover) serving model `gpt`
/// (deployment `gpt-dep`), and provider `oa` (OpenAI-compatible) serving `m2`; rule `guarded` →
/// [gpt, m2] with `on_refusal: fallback`, rule `plain` → [gpt, m2] without it.
fn tenant<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider, MockProvider) {
    let (az, oa) = (
        MockProvider::start(hint).unwrap(),
        MockProvider::start(hint).unwrap(),
    );
    let t = gw.tenant(hint);
    t.put_ok(
        "/providers/az",
        json!({"kind": "azure_openai", "base_url": origin(&az), "api_version": VERSION,
            "keys": ["az-key-1", "az-key-2"], "key_strategy": "failover", "timeout_ms": 5000}),
    );
    t.put_ok(
        "/models/gpt",
        json!({"provider": "az", "upstream_model": "gpt-dep", "context_window": 8000,
            "input_price_per_mtok": 1, "output_price_per_mtok": 1}),
    );
    t.provider("oa", &oa.url(), &["sk-oa"], "failover");
    t.model("m2", "oa", 2.0, 8000);
    t.put_ok(
        "/routing-rules",
        json!({"match": "guarded", "chain": ["gpt", "m2"], "on_refusal": "fallback"}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"match": "plain", "chain": ["gpt", "m2"]}),
    );
    (t, az, oa)
}

/// Azure's base URL is the resource's origin: the deployment path follows it.
pub fn origin(mock: &MockProvider) -> String {
    format!("http://127.0.0.1:{}", mock.port())
}

fn chat(t: &Tenant<'_>, model: &str, stream: bool) -> Resp {
    let body = json!({"model": model, "stream": stream,
        "messages": [{"role": "user", "content": "hi"}]});
    t.post_with("/v1/chat/completions", &body, &[])
}

#[test]
fn azure_openai_calls_the_deployment_path_with_api_version_and_the_key_in_api_key() {
    let gw = Gateway::shared();
    let (t, az, _) = tenant(gw, "azure-wire");
    for stream in [false, true] {
        let r = chat(&t, "gpt", stream);
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.header("x-cognigate-platform"), Some("azure"));
        assert_eq!(r.header("x-cognigate-provider"), Some("az"));
        if stream {
            assert!(r.text.contains("data: [DONE]"), "{}", r.text);
        }
    }
    for call in az.calls() {
        assert_eq!(
            call.path,
            format!("/openai/deployments/gpt-dep/chat/completions?api-version={VERSION}")
        );
        assert_eq!(call.header("api-key"), Some("az-key-1"));
        assert_eq!(
            call.header("authorization"),
            None,
            "the key goes in api-key only"
        );
    }
    assert_eq!(az.count(), 2);
}

#[test]
fn azure_embeddings_go_to_the_deployments_embeddings_path() {
    let gw = Gateway::shared();
    let (t, az, _) = tenant(gw, "azure-emb");
    t.put_ok(
        "/models/emb",
        json!({"provider": "az", "upstream_model": "emb-dep", "context_window": 8000,
            "capabilities": ["embeddings"]}),
    );
    let r = t.post_with(
        "/v1/embeddings",
        &json!({"model": "emb", "input": "hello"}),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let call = az.calls().pop().unwrap();
    assert_eq!(
        call.path,
        format!("/openai/deployments/emb-dep/embeddings?api-version={VERSION}")
    );
}

#[test]
fn azures_retry_after_ms_wins_over_retry_after() {
    let gw = Gateway::shared();
    let (t, az, _) = tenant(gw, "azure-park");
    let throttled = Reply::json(429, r#"{"error":{"code":"429","message":"Rate limit"}}"#)
        .header("Retry-After", "30")
        .header("retry-after-ms", "300");
    az.push(Rule::any(throttled).key("az-key-1").times(1));
    assert_eq!(chat(&t, "gpt", false).status, 200);
    assert_eq!(chat(&t, "gpt", false).status, 200);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(chat(&t, "gpt", false).status, 200);
    assert_eq!(
        az.keys(),
        ["az-key-1", "az-key-2", "az-key-2", "az-key-1"],
        "parked for 300 ms, not 30 s"
    );
}

fn filtered_400() -> Reply {
    Reply::json(
        400,
        &json!({"error": {"code": "content_filter", "param": "prompt", "status": 400,
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy."}})
        .to_string(),
    )
}

#[test]
fn an_azure_content_filter_400_falls_back_and_with_the_fallback_off_comes_back_as_it_was() {
    let gw = Gateway::shared();
    let (t, az, oa) = tenant(gw, "azure-filter400");
    az.push(Rule::any(filtered_400()).times(1));
    let r = chat(&t, "guarded", false);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-policy-fallback"), Some("applied"));
    assert_eq!(r.header("x-cognigate-provider"), Some("oa"));
    assert_eq!(oa.count(), 1);

    az.push(Rule::any(filtered_400()).times(1));
    let r = chat(&t, "plain", false);
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("content_filter"));
    assert_eq!(oa.count(), 1, "a request-caused 400 never cascades");
}

#[test]
fn an_azure_content_filter_finish_reason_falls_back() {
    let gw = Gateway::shared();
    let (t, az, oa) = tenant(gw, "azure-filter200");
    az.push(Rule::any(content_filter()).times(1));
    let r = chat(&t, "guarded", false);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-policy-fallback"), Some("applied"));
    assert_eq!(oa.count(), 1);
}
