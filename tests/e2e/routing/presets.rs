//! Chain presets end to end: `POST /admin/v1/tenants/{t}/routing-rules/{rule}/sort` reorders a
//! rule's chain by `smartest`, `fastest` or `budget`, answers the rule as the listing shows it,
//! and the next request routes by the new order; an unknown preset is 400, an unknown rule 404.

use crate::support::gateway::{Gateway, Resp, Tenant, ADMIN_KEY};
use crate::support::tenant::put_ranked_models;
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};

/// Models (list price, quality rank): cheap (2, 2), mid (6, 1), dear (10, unranked); dear
/// answers in 300 ms, mid in 10 ms, cheap is never asked. Rule `coding` for `smart`, when the
/// request is not streamed: dear, cheap, mid.
fn tenant<'g>(gw: &'g Gateway, mock: &MockProvider) -> Tenant<'g> {
    let t = gw.tenant("presets");
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    put_ranked_models(
        &[
            ("cheap", 1, Some(2)),
            ("mid", 3, Some(1)),
            ("dear", 5, None),
        ],
        |path, body| t.put_ok(path, body.clone()).json(),
    );
    mock.push(Rule::any(Reply::ok().delay(300)).model("dear"));
    mock.push(Rule::any(Reply::ok().delay(10)).model("mid"));
    t.put_ok(
        "/routing-rules",
        json!({"name": "coding", "match": "smart", "when": {"params.stream": false},
               "chain": ["dear", "cheap", "mid"]}),
    );
    t
}

fn sort(t: &Tenant<'_>, rule: &str, body: &str) -> Resp {
    let path = t.path(&format!("/routing-rules/{rule}/sort"));
    t.gw.request("POST", &path, Some(ADMIN_KEY), Some(body))
}

fn sorted(t: &Tenant<'_>, preset: &str) -> Value {
    let r = sort(t, "coding", &json!({"preset": preset}).to_string());
    assert_eq!(r.status, 200, "{preset}: {}", r.text);
    let rule = r.json();
    let listed = t.gw.admin("GET", &t.path("/routing-rules"), None).json();
    assert_eq!(rule, listed["data"][0], "the answer is the listing's entry");
    assert_eq!(
        rule["when"],
        json!({"params.stream": false}),
        "its `when` is kept"
    );
    rule
}

fn served(t: &Tenant<'_>) -> String {
    let r = t.chat("smart");
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-cognigate-model").unwrap_or_default().to_owned()
}

#[test]
fn each_preset_reorders_the_rules_chain_and_the_next_request_follows_it() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("presets").expect("mock");
    let t = tenant(gw, &mock);
    assert_eq!(served(&t), "dear", "as written");
    assert_eq!(t.chat("mid").status, 200);
    assert_eq!(
        sorted(&t, "smartest")["chain"],
        json!(["mid", "cheap", "dear"])
    );
    assert_eq!(served(&t), "mid");
    assert_eq!(
        sorted(&t, "budget")["chain"],
        json!(["cheap", "mid", "dear"])
    );
    assert_eq!(served(&t), "cheap");
    // dear 300 ms, mid 10 ms: measured; cheap has served once, so it has stats too.
    let fastest = sorted(&t, "fastest");
    let chain: Vec<&str> = fastest["chain"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(chain.last(), Some(&"dear"), "the slowest last: {fastest}");
    assert_eq!(chain.len(), 3, "no position added or removed");
    assert_eq!(served(&t), chain[0]);
}

#[test]
fn an_unknown_preset_or_a_malformed_body_is_400_and_an_unknown_rule_is_404() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("presets-refused").expect("mock");
    let t = tenant(gw, &mock);
    let r = sort(&t, "coding", r#"{"preset":"cheapest"}"#);
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.json()["error"]["param"], "preset", "{}", r.text);
    for body in ["{", "{}", r#"{"preset":"budget","x":1}"#] {
        assert_eq!(sort(&t, "coding", body).status, 400, "{body}");
    }
    let r = sort(&t, "no-such-rule", r#"{"preset":"budget"}"#);
    assert_eq!(r.status, 404, "{}", r.text);
    let listed = gw.admin("GET", &t.path("/routing-rules"), None).json();
    assert_eq!(
        listed["data"][0]["chain"],
        json!(["dear", "cheap", "mid"]),
        "unchanged"
    );
    let r = t.put(
        "/models/zero",
        json!({"provider": "p", "context_window": 8000, "quality_rank": 0}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.json()["error"]["param"], "quality_rank");
}
