//! Conditional routing rules end to end: several rules on one name, tried by
//! priority then name, the first whose `when` holds giving the chain; conditions on the parsed
//! request and on the `X-CogniGate-Metadata` labels; validation with the JSON path; DELETE by
//! name; rules written before (no name) keep working.

use crate::support::gateway::{Gateway, Resp, Tenant};
use serde_json::{json, Value};

/// A tenant with models `m-tools` and `m-plain` on one mock provider.
fn tenant<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, cognigate::mock::MockProvider) {
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1"], "failover");
    t.model("m-tools", "p", 1.0, 8000);
    t.model("m-plain", "p", 1.0, 8000);
    (t, mock)
}

/// Two rules on `best`: with tools → m-tools, and a fallback → m-plain.
fn two_rules_on_best(t: &Tenant<'_>) {
    t.put_ok(
        "/routing-rules",
        json!({"name": "best-tools", "match": "best", "when": {"params.tools": true}, "chain": ["m-tools"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "best-plain", "match": "best", "priority": 10, "chain": ["m-plain"]}),
    );
}

fn chat_body(model: &str, tools: bool) -> Value {
    let mut b = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
    if tools {
        b["tools"] = json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]);
    }
    b
}

fn messages_body(model: &str, tools: bool) -> Value {
    let mut b =
        json!({"model": model, "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]});
    if tools {
        b["tools"] = json!([{"name": "f", "input_schema": {"type": "object"}}]);
    }
    b
}

/// The catalog model that served, or the status and body when nothing did.
fn served(r: &Resp) -> String {
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-cognigate-model").unwrap().to_owned()
}

#[test]
fn two_rules_on_best_a_request_with_tools_is_served_by_m_tools_and_one_without_by_m_plain() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "cond-tools");
    two_rules_on_best(&t);
    let chat = "/v1/chat/completions";
    assert_eq!(
        served(&t.post_with(chat, &chat_body("best", true), &[])),
        "m-tools"
    );
    assert_eq!(
        served(&t.post_with(chat, &chat_body("best", false), &[])),
        "m-plain"
    );
    let messages = "/v1/messages";
    assert_eq!(
        served(&t.post_with(messages, &messages_body("best", true), &[])),
        "m-tools"
    );
    assert_eq!(
        served(&t.post_with(messages, &messages_body("best", false), &[])),
        "m-plain"
    );
    // Each rule is also an `auto:<name>` chain, listed by its name.
    let models = gw.request("GET", "/v1/models", Some(&t.key), None).json();
    let ids: Vec<&str> = models["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"auto:best-tools") && ids.contains(&"auto:best-plain"),
        "{ids:?}"
    );
    assert_eq!(
        served(&t.post_with(chat, &chat_body("auto:best-tools", false), &[])),
        "m-tools"
    );
}

#[test]
fn a_metadata_rule_matches_only_with_that_header() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "cond-meta");
    t.put_ok(
        "/routing-rules",
        json!({"name": "search", "match": "best", "when": {"metadata.team": "search"}, "chain": ["m-tools"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "rest", "match": "best", "priority": 1, "chain": ["m-plain"]}),
    );
    let chat = "/v1/chat/completions";
    let body = chat_body("best", false);
    let search = [("x-cognigate-metadata", r#"{"team":"search"}"#)];
    assert_eq!(served(&t.post_with(chat, &body, &search)), "m-tools");
    let ads = [("x-cognigate-metadata", r#"{"team":"ads"}"#)];
    assert_eq!(served(&t.post_with(chat, &body, &ads)), "m-plain");
    assert_eq!(served(&t.post_with(chat, &body, &[])), "m-plain");
    let responses = json!({"model": "best", "input": "hi"});
    assert_eq!(
        served(&t.post_with("/v1/responses", &responses, &search)),
        "m-tools"
    );
    // A name only a conditional rule gives: count_tokens resolves it as /v1/messages would.
    t.put_ok(
        "/routing-rules",
        json!({"name": "team-only", "match": "team-only", "when": {"metadata.team": "search"}, "chain": ["m-plain"]}),
    );
    let count = json!({"model": "team-only", "messages": [{"role": "user", "content": "hi"}]});
    let path = "/v1/messages/count_tokens";
    assert_eq!(t.post_with(path, &count, &search).status, 200);
    assert_eq!(t.post_with(path, &count, &ads).status, 404);
}

#[test]
fn a_metadata_header_that_is_not_an_object_of_strings_is_a_400_naming_it_before_any_upstream_call()
{
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "cond-badmeta");
    two_rules_on_best(&t);
    let long = format!(r#"{{"k":"{}"}}"#, "x".repeat(2100));
    for bad in [r#"{"team":1}"#, "[1]", "team=search", long.as_str()] {
        let r = t.post_with(
            "/v1/chat/completions",
            &chat_body("best", false),
            &[("x-cognigate-metadata", bad)],
        );
        assert_eq!(r.status, 400, "{bad}: {}", r.text);
        let v = r.json();
        assert_eq!(v["error"]["code"], "invalid_request", "{v}");
        assert_eq!(v["error"]["param"], "X-CogniGate-Metadata", "{v}");
    }
    // The Messages surface answers in its own (Anthropic) error shape.
    let r = t.post_with(
        "/v1/messages",
        &messages_body("best", false),
        &[("x-cognigate-metadata", "[]")],
    );
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.json()["type"], "error", "{}", r.text);
    assert_eq!(mock.count(), 0, "no upstream call");
}

#[test]
fn an_unknown_operator_is_refused_with_the_json_path_and_over_deep_or_over_long_conditions_too() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "cond-refused");
    let refused = |when: Value| {
        let r = t.put(
            "/routing-rules",
            json!({"match": "best", "when": when, "chain": ["m-plain"]}),
        );
        assert_eq!(r.status, 400, "{}", r.text);
        let v = r.json();
        assert_eq!(v["error"]["code"], "invalid_request", "{v}");
        v["error"]["param"].as_str().unwrap().to_owned()
    };
    assert_eq!(refused(json!({"$foo": 1})), "when.$foo");
    assert_eq!(
        refused(json!({"$and": [{"params.max_tokens": {"$gt": "big"}}]})),
        "when.$and[0].params.max_tokens.$gt"
    );
    let deep = json!({"$not": {"$not": {"$not": {"$not": {"params.stream": true}}}}});
    assert_eq!(refused(deep), "when.$not.$not.$not.$not");
    let long: Vec<Value> = (0..33)
        .map(|i| json!({"params.max_tokens": {"$ne": i}}))
        .collect();
    assert_eq!(
        refused(json!({"$or": long})),
        "when.$or[32].params.max_tokens.$ne"
    );
    let rules = gw.admin("GET", &t.path("/routing-rules"), None).json();
    assert_eq!(rules["data"], json!([]), "nothing written");
}

#[test]
fn rules_are_tried_by_priority_then_by_name() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "cond-order");
    // Both hold for every request: the lower priority wins, then the name that sorts first.
    t.put_ok(
        "/routing-rules",
        json!({"name": "b", "match": "app", "priority": 2, "chain": ["m-tools"]}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "c", "match": "app", "priority": 1, "chain": ["m-plain"]}),
    );
    let chat = "/v1/chat/completions";
    assert_eq!(
        served(&t.post_with(chat, &chat_body("app", false), &[])),
        "m-plain"
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "a", "match": "app", "priority": 1, "chain": ["m-tools"]}),
    );
    assert_eq!(
        served(&t.post_with(chat, &chat_body("app", false), &[])),
        "m-tools"
    );
    let listed = gw.admin("GET", &t.path("/routing-rules"), None).json();
    let names: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "c", "b"]);
}

#[test]
fn delete_takes_the_rule_name_and_when_no_rule_holds_the_name_resolves_as_if_none_existed() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "cond-delete");
    two_rules_on_best(&t);
    let r = gw.admin("DELETE", &t.path("/routing-rules/best-plain"), None);
    assert_eq!(
        (r.status, r.json()["deleted"].as_str()),
        (200, Some("best-plain"))
    );
    let chat = "/v1/chat/completions";
    assert_eq!(
        served(&t.post_with(chat, &chat_body("best", true), &[])),
        "m-tools"
    );
    // Without tools no rule holds: `best` is then the tenant's default alias itself.
    let r = t.post_with(chat, &chat_body("best", false), &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.header("x-cognigate-model"),
        Some("m"),
        "the alias: equal prices, the first id"
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "ghost", "match": "ghost", "when": {"params.stream": true}, "chain": ["m-plain"]}),
    );
    let r = t.post_with(chat, &chat_body("ghost", false), &[]);
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (404, Some("model_not_found"))
    );
}

#[test]
fn a_rule_written_without_a_name_keeps_working_beside_conditional_rules_on_its_match() {
    let gw = Gateway::shared();
    let (t, _mock) = tenant(gw, "cond-old");
    let r = t.rule("best", &["m-plain"]);
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.json();
    assert_eq!(
        (v["name"].as_str(), v["priority"].as_i64()),
        (Some("best"), Some(0))
    );
    t.put_ok(
        "/routing-rules",
        json!({"name": "best-tools", "match": "best", "priority": -1, "when": {"params.tools": true}, "chain": ["m-tools"]}),
    );
    let chat = "/v1/chat/completions";
    assert_eq!(
        served(&t.post_with(chat, &chat_body("best", false), &[])),
        "m-plain"
    );
    assert_eq!(
        served(&t.post_with(chat, &chat_body("best", true), &[])),
        "m-tools"
    );
    // Written again by its match alone, it is the same rule (its name is its match).
    t.rule("best", &["m-tools"]);
    let listed = gw.admin("GET", &t.path("/routing-rules"), None).json();
    assert_eq!(listed["data"].as_array().unwrap().len(), 2, "{listed}");
    assert_eq!(
        served(&t.post_with(chat, &chat_body("best", false), &[])),
        "m-tools"
    );
    let r = gw.admin("DELETE", &t.path("/routing-rules/best"), None);
    assert_eq!(r.status, 200, "{}", r.text);
}
