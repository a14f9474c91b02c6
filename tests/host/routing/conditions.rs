//! The admin rules for conditional routing rules, over the in-memory store: rules are
//! upserted and deleted by name (defaulting to their match), several may share a match, `when` is
//! validated with its JSON path, and a tenant holds at most 100 rules.

use crate::support::admin_world::AdminWorld as World;
use cognigate::admin::Verb;
use cognigate::config::rule::MAX_RULES;
use cognigate::config::TenantId;
use serde_json::{json, Value};

const RULES: &str = "/admin/v1/tenants/acme/routing-rules";

fn put(w: &World, body: Value) -> Value {
    w.ok(Verb::Put, RULES, &body.to_string())
}

fn listed(w: &World) -> Vec<Value> {
    w.ok(Verb::Get, RULES, "")["data"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_rule_written_without_a_name_is_named_after_its_match_and_replaced_by_the_same_match() {
    let w = World::with_acme();
    let v = put(&w, json!({"match": "best", "chain": ["a"]}));
    assert_eq!(
        (
            v["name"].as_str(),
            v["match"].as_str(),
            v["priority"].as_i64()
        ),
        (Some("best"), Some("best"), Some(0))
    );
    assert!(v.get("when").is_none(), "no when, none shown: {v}");
    put(&w, json!({"match": "best", "chain": ["b"]}));
    let rules = listed(&w);
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0]["chain"], json!(["b"]));
}

#[test]
fn several_rules_may_share_a_match_and_are_listed_with_name_priority_and_when() {
    let w = World::with_acme();
    put(
        &w,
        json!({"name": "best-tools", "match": "best", "priority": 1, "when": {"params.tools": true}, "chain": ["a"]}),
    );
    put(
        &w,
        json!({"name": "best-plain", "match": "best", "priority": 5, "chain": ["b"]}),
    );
    let rules = listed(&w);
    let names: Vec<&str> = rules.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["best-tools", "best-plain"],
        "in the order they are tried"
    );
    assert_eq!(rules[0]["when"], json!({"params.tools": true}));
    assert_eq!(rules[0]["priority"], 1);
    assert!(rules[1].get("when").is_none());
}

#[test]
fn delete_takes_the_rules_name_and_an_unnamed_rule_still_deletes_by_its_match() {
    let w = World::with_acme();
    put(&w, json!({"match": "best", "chain": ["a"]}));
    put(
        &w,
        json!({"name": "t", "match": "best", "when": {"params.stream": true}, "chain": ["b"]}),
    );
    let (status, _) = w.refused(Verb::Delete, &format!("{RULES}/nope"), "");
    assert_eq!(status, 404);
    assert_eq!(
        w.ok(Verb::Delete, &format!("{RULES}/t"), "")["deleted"],
        "t"
    );
    assert_eq!(
        w.ok(Verb::Delete, &format!("{RULES}/best"), "")["deleted"],
        "best"
    );
    assert!(listed(&w).is_empty());
}

#[test]
fn a_bad_when_is_a_400_naming_its_json_path_and_nothing_is_written() {
    let w = World::with_acme();
    for (when, path) in [
        (json!({"$foo": 1}), "when.$foo"),
        (
            json!({"$and": [{"params.max_tokens": "many"}]}),
            "when.$and[0].params.max_tokens",
        ),
        (json!({"params.stream": 1}), "when.params.stream"),
        (
            json!({"params.model": {"$regex": "("}}),
            "when.params.model.$regex",
        ),
        (json!([1]), "when"),
    ] {
        let body = json!({"match": "best", "when": when, "chain": ["a"]});
        let (status, v) = w.refused(Verb::Put, RULES, &body.to_string());
        assert_eq!(status, 400, "{v}");
        assert_eq!(v["error"]["code"], "invalid_request");
        assert_eq!(v["error"]["param"], path, "{v}");
    }
    assert!(listed(&w).is_empty());
}

#[test]
fn a_rule_name_may_not_be_an_auto_name() {
    let w = World::with_acme();
    let body = json!({"name": "auto:x", "match": "best", "chain": ["a"]});
    let (status, v) = w.refused(Verb::Put, RULES, &body.to_string());
    assert_eq!((status, v["error"]["param"].as_str()), (400, Some("name")));
}

#[test]
fn a_tenant_holds_at_most_100_rules_and_the_101st_is_a_409_while_rewriting_one_still_works() {
    let w = World::with_acme();
    for i in 0..MAX_RULES {
        put(
            &w,
            json!({"name": format!("r{i}"), "match": "best", "priority": i, "chain": ["a"]}),
        );
    }
    let body = json!({"name": "one-more", "match": "best", "chain": ["a"]});
    let (status, v) = w.refused(Verb::Put, RULES, &body.to_string());
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (409, Some("conflict")),
        "{v}"
    );
    put(&w, json!({"name": "r7", "match": "other", "chain": ["b"]}));
    let data = w.store.data(&TenantId::parse("acme").unwrap()).unwrap();
    assert_eq!(data.rules.len(), MAX_RULES);
    assert_eq!(data.rules.for_match("other").len(), 1);
}
