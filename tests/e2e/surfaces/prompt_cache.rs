//! Prompt-cache breakpoint injection end to end: an alias or rule that asks for it has its marks
//! land in the body the Anthropic mock records, the caller's own marks go through untouched, the
//! 1-hour tier's beta is merged into the caller's `anthropic-beta`, and a chat content part's own
//! `cache_control` reaches Anthropic. The mock answers with cache tokens, as Anthropic does.

use crate::support::gateway::{Gateway, Resp, Tenant};
use cognigate::mock::{Call, MockProvider, Reply};
use serde_json::{json, Value};

const BETA_1H: &str = "extended-cache-ttl-2025-04-11";
const FILES_BETA: &str = "files-api-2025-04-14";

/// A Messages answer that read 900 prompt tokens from the cache and wrote 300.
fn cached_answer() -> Reply {
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 20, "cache_creation_input_tokens": 300,
                  "cache_read_input_tokens": 900, "output_tokens": 3}});
    Reply::json(200, &body.to_string())
}

/// A tenant of the shared gateway with `claude` on a fresh Anthropic mock that answers with cache
/// tokens, and aliases `cached` (injecting at the 5-minute tier) and `plain` pinning it.
fn setup(hint: &str) -> (Tenant<'static>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    mock.set_default(cached_answer());
    let t = Gateway::shared().tenant(hint);
    t.anthropic_claude(&mock.url(), json!({"min_cache_tokens": 1}));
    t.put_ok(
        "/aliases/cached",
        json!({"pin": "claude", "prompt_cache": {"inject": true}}),
    );
    t.put_ok("/aliases/plain", json!({"pin": "claude"}));
    (t, mock)
}

fn conversation(model: &str) -> Value {
    json!({"model": model, "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]})
}

fn chat(t: &Tenant<'_>, body: &Value) -> Resp {
    let r = t.post_with("/v1/chat/completions", body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    r
}

/// One text block of `text` closed by the mark `cc`, as a marked string prompt becomes.
fn marked_text(text: &str, cc: &Value) -> Value {
    json!([{"type": "text", "text": text, "cache_control": cc}])
}

/// `sent` on the Messages surface with the caller's own `anthropic-beta` (`FILES_BETA`): the
/// answer, and the call the mock recorded.
fn messages_with_beta(t: &Tenant<'_>, mock: &MockProvider, sent: &Value) -> (Resp, Call) {
    let r = t.post_with("/v1/messages", sent, &[("anthropic-beta", FILES_BETA)]);
    assert_eq!(r.status, 200, "{}", r.text);
    (r, mock.calls().last().cloned().unwrap())
}

fn last_body(mock: &MockProvider) -> Value {
    mock.calls().last().unwrap().body.clone()
}

#[test]
fn an_alias_with_prompt_cache_inject_has_its_marks_land_in_the_upstream_body() {
    let (t, mock) = setup("pc-alias");
    let r = chat(&t, &conversation("cached"));
    let eph = json!({"type": "ephemeral"});
    let body = last_body(&mock);
    assert_eq!(body["tools"][0]["cache_control"], eph, "{body}");
    assert_eq!(body["system"], marked_text("Be brief.", &eph));
    assert_eq!(body["messages"][0]["content"], marked_text("first", &eph));
    assert_eq!(body["messages"][2]["content"][0]["cache_control"], eph);
    assert_eq!(body.to_string().matches("cache_control").count(), 4);
    assert_eq!(mock.calls().last().unwrap().header("anthropic-beta"), None);
    assert_eq!(
        r.json()["usage"]["prompt_tokens_details"]["cached_tokens"],
        900
    );
    // The same conversation by a name without the setting: sent as before, no mark.
    chat(&t, &conversation("plain"));
    let body = last_body(&mock);
    assert_eq!(body["system"], "Be brief.");
    assert!(!body.to_string().contains("cache_control"), "{body}");
    // A model whose minimum no prefix reaches gets no mark either.
    t.put_claude(json!({"min_cache_tokens": 4096}));
    chat(&t, &conversation("cached"));
    assert!(!last_body(&mock).to_string().contains("cache_control"));
}

#[test]
fn a_matched_rules_prompt_cache_overrides_the_alias_it_lists() {
    let (t, mock) = setup("pc-rule");
    t.put_ok(
        "/routing-rules",
        json!({"match": "app", "chain": ["plain"], "prompt_cache": {"inject": true, "ttl": "1h"}}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"match": "quiet", "chain": ["cached"]}),
    );
    let listed = t.gw.admin("GET", &t.path("/routing-rules"), None).json();
    let app = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "app")
        .cloned();
    assert_eq!(
        app.unwrap()["prompt_cache"],
        json!({"inject": true, "ttl": "1h"})
    );
    chat(&t, &conversation("app"));
    let hour = json!({"type": "ephemeral", "ttl": "1h"});
    let body = last_body(&mock);
    assert_eq!(body["tools"][0]["cache_control"], hour, "{body}");
    assert_eq!(body["messages"][2]["content"][0]["cache_control"], hour);
    assert_eq!(
        mock.calls().last().unwrap().header("anthropic-beta"),
        Some(BETA_1H)
    );
    chat(&t, &conversation("quiet"));
    assert!(
        !last_body(&mock).to_string().contains("cache_control"),
        "the rule's (absent) setting applies, not its alias's"
    );
}

#[test]
fn a_messages_request_that_marks_its_own_blocks_reaches_the_upstream_exactly_as_sent() {
    let (t, mock) = setup("pc-own");
    let sent = json!({"model": "cached", "max_tokens": 10, "system": "Be brief.",
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": "ok"}, {"role": "user", "content": "again"}]});
    let (r, call) = messages_with_beta(&t, &mock, &sent);
    let mut want = sent.clone();
    want["model"] = json!("claude-sonnet-4-5");
    assert_eq!(call.body, want);
    assert_eq!(call.header("anthropic-beta"), Some(FILES_BETA));
    assert_eq!(r.json()["usage"]["cache_read_input_tokens"], 900);
}

#[test]
fn ttl_1h_merges_its_beta_into_the_callers_anthropic_beta_on_the_messages_surface() {
    let (t, mock) = setup("pc-beta");
    t.put_ok(
        "/aliases/hour",
        json!({"pin": "claude", "prompt_cache": {"inject": true, "ttl": "1h"}}),
    );
    let sent = json!({"model": "hour", "max_tokens": 10, "system": "Be brief.",
        "messages": [{"role": "user", "content": "hi"}]});
    let (_, call) = messages_with_beta(&t, &mock, &sent);
    let hour = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(call.body["system"], marked_text("Be brief.", &hour));
    assert_eq!(
        call.body["messages"][0]["content"],
        marked_text("hi", &hour)
    );
    assert_eq!(
        call.header("anthropic-beta"),
        Some(format!("{FILES_BETA},{BETA_1H}").as_str())
    );
}

#[test]
fn a_chat_content_parts_own_cache_control_is_carried_to_anthropic() {
    let (t, mock) = setup("pc-carry");
    let cc = json!({"type": "ephemeral"});
    let body = json!({"model": "plain", "messages": [
        {"role": "system", "content": [{"type": "text", "text": "rules", "cache_control": cc}]},
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": cc}]}]});
    chat(&t, &body);
    let sent = last_body(&mock);
    assert_eq!(sent["system"], marked_text("rules", &cc));
    assert_eq!(sent["messages"][0]["content"], marked_text("hi", &cc));
}

#[test]
fn prompt_cache_and_min_cache_tokens_are_shown_and_a_bad_one_is_a_400_naming_the_field() {
    let (t, _mock) = setup("pc-admin");
    let alias = t.gw.admin("GET", &t.path("/aliases/cached"), None).json();
    assert_eq!(alias["prompt_cache"], json!({"inject": true}));
    let model = t.gw.admin("GET", &t.path("/models/claude"), None).json();
    assert_eq!(model["min_cache_tokens"], 1);
    let r = t.put(
        "/aliases/bad",
        json!({"pin": "claude", "prompt_cache": {"inject": true, "ttl": "2h"}}),
    );
    assert_eq!(r.status, 400);
    assert!(r.text.contains("prompt_cache.ttl"), "{}", r.text);
    let r = t.put(
        "/routing-rules",
        json!({"match": "x", "chain": ["claude"], "prompt_cache": {"inject": 1}}),
    );
    assert_eq!(r.status, 400);
    assert!(r.text.contains("prompt_cache.inject"), "{}", r.text);
}
