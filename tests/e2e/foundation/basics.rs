//! The foundation, end to end: the built worker on workerd, a scripted mock upstream, local D1
//! and Durable Objects.

use crate::support::gateway::{Gateway, KEK_HEX};
use cognigate::config::sealed::Kek;
use cognigate::config::{ProviderName, TenantId};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::json;

#[test]
fn a_request_reaches_the_mock_and_its_answer_comes_back_unchanged() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("foundation").unwrap();
    let body = r#"{"id":"chatcmpl-x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"exactly this"},"finish_reason":"stop"}],"usage":{"total_tokens":3}}"#;
    mock.push(Rule::any(Reply::json(200, body)));
    let t = gw.tenant("found");
    t.provider("mock", &mock.url(), &["sk-only-1234"], "failover");
    t.model("m", "mock", 1.0, 8000);

    let r = t.chat("m");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.text, body,
        "the upstream body is passed through byte for byte"
    );
    let calls = mock.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].path, "/v1/chat/completions");
    assert_eq!(calls[0].key.as_deref(), Some("sk-only-1234"));
    assert_eq!(calls[0].body["messages"][0]["content"], "hello");
}

#[test]
fn the_durable_object_keeps_state_across_two_requests() {
    // The round-robin cursor lives in the tenant/provider Durable Object: two requests start
    // from two different keys only if the second saw what the first left behind.
    let gw = Gateway::shared();
    let mock = MockProvider::start("rr").unwrap();
    let t = gw.tenant("dostate");
    t.provider(
        "mock",
        &mock.url(),
        &["sk-first", "sk-second"],
        "round_robin",
    );
    t.model("m", "mock", 1.0, 8000);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), ["sk-first", "sk-second"]);
}

#[test]
fn a_d1_row_written_by_the_test_is_read_by_the_worker() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("d1").unwrap();
    let t = gw.tenant("d1row");
    // Written straight into D1, bypassing the admin API: the worker can only know of it by reading
    // D1. The key is sealed the way the admin API seals it.
    let kek = Kek::from_hex(KEK_HEX).unwrap();
    let tenant = TenantId::parse(&t.id).unwrap();
    let sealed = kek
        .seal(
            &tenant,
            &ProviderName::parse("direct").unwrap(),
            "sk-direct",
            [5; 12],
        )
        .unwrap();
    let provider = json!({"name": "direct", "kind": "openai", "base_url": mock.url(), "key_strategy": "failover", "timeout_ms": 5000,
        "keys": [{"id": "key_direct", "last4": "rect", "sealed": sealed}]});
    let model = json!({"id": "written-by-sql", "provider": "direct", "upstream_model": "upstream-name", "capabilities": ["chat"],
        "context_window": 8000, "input_price_per_mtok": 1.0, "output_price_per_mtok": 1.0});
    gw.sql(
        "INSERT INTO providers (tenant_id, name, spec, updated_at) VALUES (?1, 'direct', ?2, 0)",
        &[json!(t.id), json!(provider.to_string())],
    );
    gw.sql(
        "INSERT INTO models (tenant_id, id, provider, spec, updated_at) VALUES (?1, 'written-by-sql', 'direct', ?2, 0)",
        &[json!(t.id), json!(model.to_string())],
    );
    let r = t.chat("written-by-sql");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(mock.calls()[0].model.as_deref(), Some("upstream-name"));
    assert_eq!(mock.calls()[0].key.as_deref(), Some("sk-direct"));
}

#[test]
fn health_answers_without_credentials() {
    let gw = Gateway::shared();
    let r = gw.request("GET", "/v1/health", None, None);
    assert_eq!((r.status, r.json()), (200, json!({"status": "ok"})));
}
