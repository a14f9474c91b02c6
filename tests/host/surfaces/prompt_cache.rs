//! Prompt-cache breakpoints as each candidate's body and headers carry them: injected only for a
//! route that asks, never over the caller's own marks, and a chat content part's own mark carried
//! to Anthropic always.

use cognigate::config::admin_body::{parse_body, ModelBody, ProviderBody};
use cognigate::config::{CacheTtl, CatalogModel, ModelId, Provider, ProviderName};
use cognigate::providers::{self, Dialect};
use cognigate::surfaces::{Inbound, Surface};
use serde_json::{json, Value};

fn provider(spec: Value) -> Provider {
    let b: ProviderBody = parse_body(spec.to_string().as_bytes()).unwrap();
    b.validate(ProviderName::parse("p").unwrap())
        .unwrap()
        .resolve(|_| None)
        .unwrap()
}

fn anthropic() -> Provider {
    provider(
        json!({"kind": "anthropic", "base_url": "https://api.anthropic.com/v1",
        "keys": ["sk-ant-0123456789"]}),
    )
}

fn vertex() -> Provider {
    provider(
        json!({"kind": "vertex", "base_url": "https://aiplatform.googleapis.com",
        "project": "proj", "region": "global", "publisher": "anthropic",
        "keys": ["AQ.ExpressKey000000000"]}),
    )
}

fn bedrock() -> Provider {
    provider(
        json!({"kind": "bedrock", "base_url": "https://bedrock-runtime.us-east-1.amazonaws.com",
        "region": "us-east-1", "keys": ["AKIDEXAMPLE:secretsecretsecret"]}),
    )
}

fn model(upstream: &str) -> CatalogModel {
    let body = json!({"provider": "p", "upstream_model": upstream, "context_window": 200000,
        "min_cache_tokens": 1});
    let m: ModelBody = parse_body(body.to_string().as_bytes()).unwrap();
    m.validate(ModelId::parse("claude").unwrap()).unwrap()
}

fn inbound(surface: Surface, body: &Value, beta: Option<&str>) -> Inbound {
    let bytes = body.to_string().into_bytes();
    Inbound::parse(surface, bytes, 10_000, beta.map(str::to_owned), None).unwrap()
}

fn chat() -> Value {
    json!({"model": "claude", "messages": [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]})
}

fn messages() -> Value {
    json!({"model": "claude", "max_tokens": 10, "system": "Be terse.",
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "second"}]})
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn a_request_whose_route_does_not_inject_reaches_the_upstream_byte_for_byte_as_before() {
    let (p, m) = (anthropic(), model("claude-x"));
    let c = inbound(Surface::Chat, &chat(), None);
    let before = providers::body(&p, &m, c.chat());
    assert_eq!(c.body(&p, &m), before);
    assert_eq!(c.clone().injecting(None).body(&p, &m), before);
    assert_eq!(c.extra_headers(Dialect::Anthropic), None);
    // The Messages surface: the caller's fields as sent, only the model put in.
    let sent = messages();
    let native = inbound(Surface::Messages, &sent, Some("b1")).injecting(None);
    let body = String::from_utf8(native.body(&p, &m)).unwrap();
    let mut want = sent.clone();
    want["model"] = json!("claude-x");
    assert_eq!(json_of(body.as_bytes()), want);
    for field in ["system", "tools", "messages"] {
        let raw = format!("\"{field}\":{}", sent[field]);
        assert!(body.contains(&raw), "{field} as sent: {body}");
    }
    assert_eq!(
        native.extra_headers(Dialect::Anthropic),
        Some(("anthropic-beta", "b1".to_owned()))
    );
    let b = bedrock();
    let chat = inbound(Surface::Chat, &chat(), None);
    assert_eq!(
        chat.body(&b, &model("anthropic.claude-3-7-sonnet")),
        providers::body(&b, &model("anthropic.claude-3-7-sonnet"), chat.chat())
    );
}

#[test]
fn an_injecting_route_marks_the_last_tool_the_system_and_the_last_two_user_turns_on_both_surfaces()
{
    let eph = json!({"type": "ephemeral"});
    for p in [anthropic(), vertex()] {
        let m = model("claude-x");
        let c = inbound(Surface::Chat, &chat(), None).injecting(Some(CacheTtl::FiveMinutes));
        let out = json_of(&c.body(&p, &m));
        assert_eq!(out["tools"][0]["cache_control"], eph);
        assert_eq!(
            out["system"],
            json!([{"type": "text", "text": "Be terse.", "cache_control": eph}])
        );
        assert_eq!(out["messages"][0]["content"][0]["cache_control"], eph);
        assert_eq!(out["messages"][2]["content"][0]["cache_control"], eph);
        assert_eq!(
            c.extra_headers(Dialect::Anthropic),
            None,
            "5m needs no beta"
        );
        let n =
            inbound(Surface::Messages, &messages(), None).injecting(Some(CacheTtl::FiveMinutes));
        let out = json_of(&n.body(&p, &m));
        assert_eq!(out["tools"][0]["cache_control"], eph);
        assert_eq!(out["system"][0]["cache_control"], eph);
        assert_eq!(
            out["messages"][2]["content"],
            json!([{"type": "text", "text": "second", "cache_control": eph}])
        );
        assert_eq!(out["max_tokens"], 10);
    }
    let b = bedrock();
    let c = inbound(Surface::Chat, &chat(), None).injecting(Some(CacheTtl::OneHour));
    let out = json_of(&c.body(&b, &model("anthropic.claude-sonnet-4")));
    let point = json!({"cachePoint": {"type": "default", "ttl": "1h"}});
    assert_eq!(out["system"][1], point);
    assert_eq!(out["toolConfig"]["tools"][1], point);
    assert_eq!(out["messages"][2]["content"][1], point);
    assert_eq!(c.extra_headers(Dialect::Bedrock), None);
}

#[test]
fn a_request_that_marks_anything_of_its_own_is_sent_exactly_as_built_without_a_beta() {
    let (p, m) = (anthropic(), model("claude-x"));
    let mut own = messages();
    own["messages"][0]["content"] =
        json!([{"type": "text", "text": "first", "cache_control": {"type": "ephemeral"}}]);
    let plain = inbound(Surface::Messages, &own, Some("b1"));
    let asked = plain.clone().injecting(Some(CacheTtl::OneHour));
    assert_eq!(asked.body(&p, &m), plain.body(&p, &m));
    assert_eq!(
        asked.extra_headers(Dialect::Anthropic),
        Some(("anthropic-beta", "b1".to_owned()))
    );
    let mut top = messages();
    top["cache_control"] = json!({"type": "ephemeral"});
    let plain = inbound(Surface::Messages, &top, None);
    let asked = plain.clone().injecting(Some(CacheTtl::FiveMinutes));
    assert_eq!(asked.body(&p, &m), plain.body(&p, &m));
}

#[test]
fn ttl_1h_marks_with_the_hour_and_merges_the_beta_with_the_callers() {
    let (p, m) = (anthropic(), model("claude-x"));
    let n = inbound(Surface::Messages, &messages(), Some("files-api-2025-04-14"))
        .injecting(Some(CacheTtl::OneHour));
    let out = json_of(&n.body(&p, &m));
    assert_eq!(
        out["system"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert_eq!(
        n.extra_headers(Dialect::Anthropic),
        Some((
            "anthropic-beta",
            "files-api-2025-04-14,extended-cache-ttl-2025-04-11".to_owned()
        ))
    );
    let c = inbound(Surface::Chat, &chat(), None).injecting(Some(CacheTtl::OneHour));
    assert_eq!(
        c.extra_headers(Dialect::Anthropic),
        Some(("anthropic-beta", "extended-cache-ttl-2025-04-11".to_owned()))
    );
    assert_eq!(c.extra_headers(Dialect::Openai), None);
}

#[test]
fn a_chat_content_parts_own_cache_control_is_carried_to_anthropic_without_injection() {
    let (p, m) = (anthropic(), model("claude-x"));
    let cc = json!({"type": "ephemeral"});
    let body = json!({"model": "claude", "messages": [
        {"role": "system", "content": [{"type": "text", "text": "rules", "cache_control": cc},
            {"type": "text", "text": "more"}]},
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": cc}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "t1", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "t1", "content": [{"type": "text", "text": "r", "cache_control": cc}]}],
        "tools": [{"type": "function", "function": {"name": "f"}, "cache_control": cc}]});
    let out = json_of(&inbound(Surface::Chat, &body, None).body(&p, &m));
    assert_eq!(
        out["system"],
        json!([{"type": "text", "text": "rules", "cache_control": cc}, {"type": "text", "text": "more"}])
    );
    assert_eq!(out["messages"][0]["content"][0]["cache_control"], cc);
    assert_eq!(out["messages"][2]["content"][0]["cache_control"], cc);
    assert_eq!(out["tools"][0]["cache_control"], cc);
    // Without a mark, the system prompt stays one string.
    let plain = json!({"model": "claude", "messages": [{"role": "system", "content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, {"role": "user", "content": "hi"}]});
    let out = json_of(&inbound(Surface::Chat, &plain, None).body(&p, &m));
    assert_eq!(out["system"], "a\nb");
}
