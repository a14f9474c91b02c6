//! The response cache, on workerd against the mock and with the official `openai`
//! Python SDK. Identical requests are answered without an upstream call, streamed or not, per
//! tenant, at $0 to the key, counted as savings in the usage API.

use crate::support::gateway::eventually;
use crate::support::response_cache::*;
use cognigate::mock::{Reply, Rule};
use serde_json::{json, Value};

#[test]
fn two_identical_chat_requests_make_one_upstream_call_and_the_second_is_a_hit_with_the_same_body() {
    let (t, mock) = cached("cache-same", json!({"ttl_s": 300}));
    mock.push(Rule::any(answer("first answer")).times(1));
    mock.push(Rule::any(answer("second answer")));
    let body = chat_body("hello", 0.2);
    let first = post(&t, &body, &[]);
    stored(&t, &first);
    let second = post(&t, &body, &[]);
    assert_eq!(mock.count(), 1, "one upstream call");
    assert_eq!(second.header("x-cognigate-cache"), Some("hit"));
    assert_eq!(second.text, first.text, "the stored answer, byte for byte");
    assert!(second
        .header("age")
        .is_some_and(|a| a.parse::<u64>().is_ok()));
    assert_eq!(second.header("x-cognigate-model"), Some("m"));
    assert_eq!(second.header("x-cognigate-provider"), Some("p"));
    assert_ne!(
        second.header("x-cognigate-request-id"),
        first.header("x-cognigate-request-id"),
        "a new request id on every request"
    );
    // Key order and number spelling do not matter.
    let respelled: Value = serde_json::from_str(
        r#"{"messages":[{"content":"hello","role":"user"}],"temperature":2e-1,"model":"m"}"#,
    )
    .unwrap();
    let third = post(&t, &respelled, &[]);
    assert_eq!(third.header("x-cognigate-cache"), Some("hit"));
    assert_eq!(mock.count(), 1);
}

#[test]
fn changing_the_temperature_a_message_or_the_tools_is_a_miss_and_so_is_another_tenant() {
    let (t, mock) = cached("cache-miss", json!({"ttl_s": 300}));
    let body = chat_body("hello", 0.2);
    stored(&t, &post(&t, &body, &[]));
    assert_eq!(
        post(&t, &body, &[]).header("x-cognigate-cache"),
        Some("hit")
    );
    let mut tools = body.clone();
    tools["tools"] =
        json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]);
    let changed = [chat_body("hello", 0.3), chat_body("hello!", 0.2), tools];
    for (i, b) in changed.iter().enumerate() {
        let r = post(&t, b, &[]);
        assert_eq!(r.header("x-cognigate-cache"), Some("miss"), "{b}");
        assert_eq!(mock.count(), 2 + i);
    }
    let (other, other_mock) = cached("cache-miss-other", json!({"ttl_s": 300}));
    let r = post(&other, &body, &[]);
    assert_eq!(
        r.header("x-cognigate-cache"),
        Some("miss"),
        "never shared across tenants"
    );
    assert_eq!(other_mock.count(), 1);
}

#[test]
fn a_streamed_request_after_a_non_streamed_one_is_a_hit_the_sdk_reassembles_to_the_same_text() {
    let (t, mock) = cached("cache-stream", json!({"ttl_s": 300}));
    let plain = cache_sdk(&t, "chat");
    assert_eq!(plain["cache"], "miss", "{plain}");
    stored_id(&t, plain["request_id"].as_str().unwrap());
    let streamed = cache_sdk(&t, "chat_stream");
    assert_eq!(streamed["cache"], "hit", "{streamed}");
    assert_eq!(streamed["text"], plain["text"]);
    assert_eq!(streamed["finish"], "stop");
    assert_eq!(streamed["usage"], 12, "the usage chunk it asked for");
    assert_ne!(streamed["request_id"], plain["request_id"]);
    assert_eq!(mock.count(), 1, "no upstream call for the stream");
}

#[test]
fn embeddings_hit() {
    let (t, mock) = cached("cache-embed", json!({"ttl_s": 300}));
    let body = json!({"model": "m", "input": "the same document"});
    let first = t.post_with("/v1/embeddings", &body, &[]);
    assert_eq!(
        (first.status, first.header("x-cognigate-cache")),
        (200, Some("miss")),
        "{}",
        first.text
    );
    stored(&t, &first);
    let second = t.post_with("/v1/embeddings", &body, &[]);
    assert_eq!(second.header("x-cognigate-cache"), Some("hit"));
    assert_eq!(second.json()["data"], first.json()["data"]);
    assert_eq!(mock.count(), 1);
}

#[test]
fn cache_off_makes_the_upstream_call_and_a_bad_cache_header_is_a_400_naming_it() {
    let (t, mock) = cached("cache-off", json!({"ttl_s": 300}));
    let body = chat_body("hello", 0.2);
    stored(&t, &post(&t, &body, &[]));
    let off = post(&t, &body, &[("x-cognigate-cache", "off")]);
    assert_eq!(off.header("x-cognigate-cache"), Some("bypass"));
    assert_eq!(mock.count(), 2, "bypassed: the upstream answered");
    let bad = t.post_with(
        "/v1/chat/completions",
        &body,
        &[("x-cognigate-cache-ttl", "soon")],
    );
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert_eq!(bad.json()["error"]["param"], "X-CogniGate-Cache-Ttl");
    assert_eq!(mock.count(), 2);
}

#[test]
fn without_any_level_opting_in_nothing_is_cached_and_a_request_header_an_alias_or_a_rule_opts_in() {
    let (t, mock) = cached("cache-levels", Value::Null);
    let body = chat_body("hello", 0.2);
    let r = post(&t, &body, &[]);
    assert_eq!(
        r.header("x-cognigate-cache"),
        None,
        "off: no header, no lookup"
    );
    post(&t, &body, &[]);
    assert_eq!(mock.count(), 2);
    let asked = [("x-cognigate-cache-ttl", "60")];
    stored(&t, &post(&t, &body, &asked));
    assert_eq!(
        post(&t, &body, &asked).header("x-cognigate-cache"),
        Some("hit")
    );
    assert_eq!(mock.count(), 3);
    t.put_ok("/aliases/cached", json!({"pin": "m", "cache_ttl_s": 60}));
    let aliased = json!({"model": "cached", "messages": [{"role": "user", "content": "hi"}]});
    stored(&t, &post(&t, &aliased, &[]));
    assert_eq!(
        post(&t, &aliased, &[]).header("x-cognigate-cache"),
        Some("hit")
    );
    let zero = [("x-cognigate-cache-ttl", "0")];
    assert_eq!(
        post(&t, &aliased, &zero).header("x-cognigate-cache"),
        None,
        "0 means off"
    );
    assert_eq!(mock.count(), 5);
    // A routing rule's `cache_ttl_s` (stored beside its chain in D1) opts its name in, and its 0
    // turns the cache off for a name the tenant caches.
    t.put_ok(
        "/routing-rules",
        json!({"match": "ruled", "chain": ["m"], "cache_ttl_s": 60}),
    );
    let listed = t.gw.admin("GET", &t.path("/routing-rules"), None).json();
    assert_eq!(listed["data"][0]["cache_ttl_s"], 60, "{listed}");
    let ruled = json!({"model": "ruled", "messages": [{"role": "user", "content": "hi"}]});
    stored(&t, &post(&t, &ruled, &[]));
    assert_eq!(
        post(&t, &ruled, &[]).header("x-cognigate-cache"),
        Some("hit")
    );
    t.put_ok("/settings", json!({"cache": {"ttl_s": 300}}));
    t.put_ok(
        "/routing-rules",
        json!({"match": "ruled", "chain": ["m"], "cache_ttl_s": 0}),
    );
    eventually("the rule's 0 in effect", SETTLED, || {
        post(&t, &ruled, &[]).header("x-cognigate-cache").is_none()
    });
}

#[test]
fn a_hit_does_not_move_the_keys_budget_and_the_usage_api_shows_cache_hits_and_saved_usd() {
    let (t, mock) = cached("cache-usage", json!({"ttl_s": 300}));
    mock.set_default(answer("priced"));
    let (id, key) = t.key_with(json!({"rpm": 1000, "budget": {"usd": 100, "period": "day"}}));
    let body = chat_body("hello", 0.2).to_string();
    // 100,000 prompt and 50,000 completion tokens at $1 per Mtok: $0.15.
    let cost = 0.15;
    let send = || {
        t.gw.request("POST", "/v1/chat/completions", Some(&key), Some(&body))
    };
    stored(&t, &send());
    eventually("the miss charged", SETTLED, || {
        (t.key_spend(&id) - cost).abs() < 1e-9
    });
    for _ in 0..2 {
        let hit = send();
        assert_eq!(hit.header("x-cognigate-cache"), Some("hit"));
        assert_eq!(hit.header("x-cognigate-cost-usd"), Some("0"));
    }
    assert_eq!(mock.count(), 1);
    let records = t.gw.usage_records(&t.id, 3, SETTLED);
    let hits: Vec<&Value> = records.iter().filter(|r| r["cache_hit"] == true).collect();
    assert_eq!(hits.len(), 2, "{records:?}");
    assert!(hits
        .iter()
        .all(|r| r["cost_usd"] == 0.0 && (r["saved_usd"].as_f64().unwrap() - cost).abs() < 1e-9));
    let mut usage = Value::Null;
    eventually("the hits in the usage API", SETTLED, || {
        usage = t.usage("model");
        usage["total"]["requests"] == 3
    });
    let total = &usage["total"];
    assert_eq!(total["cache_hits"], 2, "{usage}");
    assert!(
        (total["saved_usd"].as_f64().unwrap() - 2.0 * cost).abs() < 1e-9,
        "{usage}"
    );
    assert!(
        (total["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-9,
        "{usage}"
    );
    assert_eq!(total["prompt_tokens"], 100000, "a hit uses no tokens");
    assert!(
        (t.key_spend(&id) - cost).abs() < 1e-9,
        "hits cost the key nothing"
    );
}

#[test]
fn a_streamed_miss_is_stored_as_it_is_relayed_and_serves_a_later_non_streamed_request() {
    let (t, mock) = cached("cache-stream-first", json!({"ttl_s": 300}));
    let streamed = cache_sdk(&t, "chat_stream");
    assert_eq!(streamed["cache"], "miss", "{streamed}");
    // The entry is written under the stream's waitUntil, once its last byte went out.
    stored_id(&t, streamed["request_id"].as_str().unwrap());
    let plain = cache_sdk(&t, "chat");
    assert_eq!(plain["cache"], "hit", "{plain}");
    assert_eq!(plain["text"], streamed["text"], "{plain} {streamed}");
    assert_eq!(mock.count(), 1, "{plain}");
    assert_eq!(
        mock.calls()[0].body["stream"],
        true,
        "the one answer was streamed"
    );
}

#[test]
fn messages_and_responses_hits_stream_in_their_own_events() {
    let (t, mock) = cached("cache-surfaces", json!({"ttl_s": 300}));
    let messages =
        json!({"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]});
    let first = t.post_with("/v1/messages", &messages, &[]);
    stored(&t, &first);
    let text = first.json()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut streamed = messages.clone();
    streamed["stream"] = json!(true);
    let hit = t.post_with("/v1/messages", &streamed, &[]);
    assert_eq!(hit.header("x-cognigate-cache"), Some("hit"), "{}", hit.text);
    assert!(hit.text.starts_with("event: message_start"), "{}", hit.text);
    assert!(
        hit.text.contains(&serde_json::to_string(&text).unwrap()),
        "{}",
        hit.text
    );
    assert!(hit.text.contains("event: message_stop"), "{}", hit.text);
    let responses = json!({"model": "m", "input": "hi"});
    let first = t.post_with("/v1/responses", &responses, &[]);
    stored(&t, &first);
    let mut streamed = responses.clone();
    streamed["stream"] = json!(true);
    let hit = t.post_with("/v1/responses", &streamed, &[]);
    assert_eq!(hit.header("x-cognigate-cache"), Some("hit"), "{}", hit.text);
    assert!(
        hit.text.contains("event: response.completed"),
        "{}",
        hit.text
    );
    assert!(
        hit.text.contains(&serde_json::to_string(&text).unwrap()),
        "{}",
        hit.text
    );
    assert_eq!(mock.count(), 2);
}

#[test]
fn a_hit_counts_toward_the_keys_rpm() {
    let (t, mock) = cached("cache-rpm", json!({"ttl_s": 300}));
    let (_, key) = t.key_with(json!({"rpm": 2}));
    let body = chat_body("hello", 0.2).to_string();
    let send = || {
        t.gw.request("POST", "/v1/chat/completions", Some(&key), Some(&body))
    };
    stored(&t, &send());
    assert_eq!(send().header("x-cognigate-cache"), Some("hit"));
    assert_eq!(send().status, 429, "a hit is still a request");
    assert_eq!(mock.count(), 1);
}

#[test]
fn a_key_whose_models_list_does_not_include_the_name_never_reaches_the_cache() {
    let (t, mock) = cached("cache-scope", json!({"ttl_s": 300}));
    let body = chat_body("hello", 0.2);
    stored(&t, &post(&t, &body, &[]));
    let (_, narrow) = t.key_with(json!({"models": ["other"]}));
    let r = t.gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&narrow),
        Some(&body.to_string()),
    );
    assert_eq!(r.status, 403, "{}", r.text);
    assert_eq!(
        r.header("x-cognigate-cache"),
        None,
        "refused before the cache"
    );
    assert_eq!(mock.count(), 1);
}

#[test]
fn errors_and_refusals_are_never_stored() {
    let (t, mock) = cached("cache-refusal", json!({"ttl_s": 300}));
    let body = chat_body("hello", 0.2);
    mock.push(Rule::any(Reply::status(400)).times(1));
    let refusal = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null}, "finish_reason": "content_filter"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}});
    mock.push(Rule::any(Reply::json(200, &refusal.to_string())).times(1));
    let error = t.post_with("/v1/chat/completions", &body, &[]);
    assert_eq!(error.status, 400, "{}", error.text);
    let refused = post(&t, &body, &[]);
    assert_eq!(
        refused.json()["choices"][0]["finish_reason"],
        "content_filter"
    );
    assert_eq!(refused.header("x-cognigate-cache"), Some("miss"));
    let answered = post(&t, &body, &[]);
    assert_eq!(
        answered.header("x-cognigate-cache"),
        Some("miss"),
        "neither was stored"
    );
    stored(&t, &answered);
    let refusal_id = refused.header("x-cognigate-request-id").unwrap();
    assert!(
        !t.gw.log().contains(&format!(
            r#""msg":"cache_stored","request_id":"{refusal_id}""#
        )),
        "the refusal was never written"
    );
    assert_eq!(
        post(&t, &body, &[]).header("x-cognigate-cache"),
        Some("hit")
    );
    assert_eq!(mock.count(), 3);
}
