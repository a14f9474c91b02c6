//! Fallback links end to end: a model's `fallback_model` followed on a transient failure, loops,
//! the 3-target cap, dead links, a rule's precedence, the tenant's `fallback_model` and `explain`
//! showing both, against one scripted mock serving every model.

use crate::support::gateway::{Gateway, Resp, Tenant};
use cognigate::mock::{chunk_event, MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};

fn rate_limited() -> Reply {
    Reply::json(
        429,
        r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#,
    )
}

/// A tenant whose provider `p` is one mock, with a model of each `(id, fallback_model)`.
fn tenant<'g>(
    gw: &'g Gateway,
    hint: &str,
    models: &[(&str, Option<&str>)],
) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    for (id, link) in models {
        let mut body =
            json!({"provider": "p", "context_window": 8000, "input_price_per_mtok": 1.0});
        if let Some(link) = link {
            body["fallback_model"] = json!(link);
        }
        t.put_ok(&format!("/models/{id}"), body);
    }
    (t, mock)
}

fn called(mock: &MockProvider) -> Vec<String> {
    mock.calls()
        .iter()
        .filter_map(|c| c.model.clone())
        .collect()
}

fn attempted(r: &Resp) -> Vec<Value> {
    let attempts = r.json()["error"]["attempts"].clone();
    attempts
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|a| a["model"].clone())
        .collect()
}

fn get_model(t: &Tenant<'_>, id: &str) -> Value {
    let r = t.gw.admin("GET", &t.path(&format!("/models/{id}")), None);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()
}

#[test]
fn a_models_link_is_followed_transitively_on_503_and_429_each_hop_adding_1_to_the_depth() {
    let gw = Gateway::shared();
    let models = [("a", Some("b")), ("b", Some("c")), ("c", None)];
    let (t, mock) = tenant(gw, "link-follow", &models);
    mock.push(Rule::any(Reply::status(503)).model("a").times(1));
    mock.push(Rule::any(rate_limited()).model("b").times(1));
    let r = t.chat("a");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("2"));
    assert_eq!(r.header("x-cognigate-model"), Some("c"));
    assert_eq!(called(&mock), ["a", "b", "c"]);
    let shown = get_model(&t, "a");
    assert_eq!(
        (&shown["fallback_model"], &shown["fallback_model_missing"]),
        (&json!("b"), &json!(false)),
        "{shown}"
    );
}

#[test]
fn a_request_caused_400_fails_at_once_without_following_the_link() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "link-400", &[("a", Some("b")), ("b", None)]);
    mock.push(Rule::any(Reply::status(400)).model("a"));
    let r = t.chat("a");
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(called(&mock), ["a"], "the link was not tried");
}

#[test]
fn a_loop_is_accepted_and_ends_the_chain_at_the_first_model_seen_twice() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "link-loop", &[("a", Some("b")), ("b", Some("a"))]);
    mock.push(Rule::any(Reply::status(503)));
    let r = t.chat("a");
    assert_eq!(r.status, 502, "{}", r.text);
    assert_eq!(attempted(&r), [json!("a"), json!("b")]);
    assert_eq!(called(&mock), ["a", "b"]);
}

#[test]
fn a_linked_chain_stops_at_3_targets_and_at_max_fallback_depth() {
    let gw = Gateway::shared();
    let models = [
        ("a", Some("b")),
        ("b", Some("c")),
        ("c", Some("d")),
        ("d", None),
    ];
    let (t, mock) = tenant(gw, "link-cap", &models);
    mock.push(Rule::any(Reply::status(503)).model("a"));
    mock.push(Rule::any(Reply::status(503)).model("b"));
    mock.push(Rule::any(Reply::status(503)).model("c"));
    let r = t.chat("a");
    assert_eq!(r.status, 502, "{}", r.text);
    assert_eq!(attempted(&r), [json!("a"), json!("b"), json!("c")]);
    assert_eq!(
        r.json()["error"]["message"],
        "All 3 routing candidates failed."
    );
    let (t, mock) = tenant(gw, "link-depth", &models);
    t.put_ok("/settings", json!({"max_fallback_depth": 2}));
    mock.push(Rule::any(Reply::status(503)));
    let r = t.chat("a");
    assert_eq!(r.status, 502, "{}", r.text);
    assert_eq!(attempted(&r), [json!("a"), json!("b")]);
}

#[test]
fn a_dead_link_is_written_shown_missing_and_ends_the_chain_without_an_error() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "link-dead", &[("a", Some("ghost")), ("b", Some("a"))]);
    let shown = get_model(&t, "a");
    assert_eq!(shown["fallback_model_missing"], json!(true), "{shown}");
    let r = t.chat("a");
    assert_eq!(
        r.status, 200,
        "a healthy model with a dead link serves: {}",
        r.text
    );
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("0"));
    mock.push(Rule::any(Reply::status(503)).model("b"));
    let r = t.chat("b");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("a"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
    // A model naming itself is refused, naming the field.
    let r = t.put(
        "/models/c",
        json!({"provider": "p", "context_window": 8000, "fallback_model": "c"}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.json()["error"]["param"], "fallback_model", "{}", r.text);
}

#[test]
fn a_matched_rule_uses_its_chain_as_written_and_follows_no_link() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(
        gw,
        "link-rule",
        &[("a", Some("b")), ("b", None), ("safe", None)],
    );
    t.put_ok("/settings", json!({"fallback_model": "safe"}));
    assert_eq!(t.rule("r", &["a"]).status, 200);
    mock.push(Rule::any(Reply::status(503)).model("a"));
    let r = t.chat("r");
    assert_eq!(r.status, 502, "{}", r.text);
    assert_eq!(
        called(&mock),
        ["a"],
        "neither the link nor the tenant fallback"
    );
}

#[test]
fn the_tenant_fallback_serves_after_a_chain_without_a_link_and_a_link_overrides_it() {
    let gw = Gateway::shared();
    let models = [("a", None), ("l", Some("b")), ("b", None), ("safe", None)];
    let (t, mock) = tenant(gw, "tenant-fallback", &models);
    let r = t.put("/settings", json!({"fallback_model": "nothing-here"}));
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.json()["error"]["param"], "fallback_model", "{}", r.text);
    let shown = t
        .put_ok("/settings", json!({"fallback_model": "safe"}))
        .json();
    assert_eq!(shown["fallback_model"], "safe", "{shown}");
    mock.push(Rule::any(Reply::status(503)).model("a"));
    mock.push(Rule::any(Reply::status(503)).model("l"));
    mock.push(Rule::any(Reply::status(503)).model("b"));
    let r = t.chat("a");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("safe"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
    mock.clear();
    mock.push(Rule::any(Reply::status(503)).model("l"));
    mock.push(Rule::any(Reply::status(503)).model("b"));
    let r = t.chat("l");
    assert_eq!(r.status, 502, "{}", r.text);
    assert_eq!(
        called(&mock),
        ["l", "b"],
        "the link overrides the tenant fallback"
    );
}

#[test]
fn explain_shows_links_and_the_tenant_fallback_as_chain_positions() {
    let gw = Gateway::shared();
    let models = [("a", Some("b")), ("b", None), ("c", None), ("safe", None)];
    let (t, mock) = tenant(gw, "link-explain", &models);
    t.put_ok("/settings", json!({"fallback_model": "safe"}));
    let explain = |model: &str| {
        let r =
            t.gw.admin("GET", &t.path(&format!("/explain?model={model}")), None);
        assert_eq!(r.status, 200, "{}", r.text);
        let out = r.json();
        out["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["position"].clone(), c["model"].clone(), c["via"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        explain("a"),
        [
            (json!(0), json!("a"), Value::Null),
            (json!(1), json!("b"), json!("fallback_model")),
        ]
    );
    assert_eq!(
        explain("c"),
        [
            (json!(0), json!("c"), Value::Null),
            (json!(1), json!("safe"), json!("tenant_fallback")),
        ]
    );
    assert_eq!(mock.count(), 0, "a dry run calls no upstream");
}

#[test]
fn a_stream_whose_model_fails_before_its_first_byte_is_served_by_the_link() {
    let gw = Gateway::shared();
    let (t, mock) = tenant(gw, "link-stream", &[("a", Some("b")), ("b", None)]);
    mock.push(Rule::any(Reply::status(503)).model("a"));
    mock.push(
        Rule::any(Reply::stream(vec![
            Step::Data(chunk_event("b", "linked")),
            Step::Data("[DONE]".into()),
        ]))
        .model("b"),
    );
    let body = json!({"model": "a", "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = t.post_with("/v1/chat/completions", &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("linked"), "{}", r.text);
    assert_eq!(r.header("x-cognigate-model"), Some("b"));
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));
}
