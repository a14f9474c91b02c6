//! Conditions against request facts, and which rule a request takes.

use super::*;
use crate::config::condition::When;
use crate::config::SortedMap;
use crate::routing::facts::Endpoint;
use crate::routing::test_config::{add_model, add_rule_json, cfg};
use crate::routing::{build_chain, ChainError, RouteInput};
use serde_json::{json, Value};

fn facts() -> RequestFacts {
    RequestFacts {
        model: "best".into(),
        stream: false,
        tools: true,
        max_tokens: Some(500),
        has_images: false,
        endpoint: Endpoint::Chat,
        metadata: SortedMap::from([("team".to_owned(), "search".to_owned())]),
        task: Some(crate::routing::facts::Task::Code),
        agent: Some(crate::routing::facts::Agent::ClaudeCode),
    }
}

fn check(v: Value, f: Option<&RequestFacts>) -> bool {
    let w = When::parse(v.as_object().unwrap().clone()).unwrap();
    holds(w.condition(), f)
}

#[test]
fn each_operator_compares_the_fact_it_names() {
    let f = facts();
    let yes = [
        json!({"params.tools": true}),
        json!({"params.stream": {"$ne": true}}),
        json!({"params.max_tokens": {"$gt": 100, "$lte": 500}}),
        json!({"params.max_tokens": {"$in": [1, 500]}}),
        json!({"params.max_tokens": {"$nin": [1, 2]}}),
        json!({"params.model": {"$regex": "^be"}}),
        json!({"params.endpoint": "chat"}),
        json!({"params.task": "code", "params.agent": {"$in": ["claude-code", "codex"]}}),
        json!({"metadata.team": "search", "metadata.tier": {"$exists": false}}),
        json!({"$or": [{"params.stream": true}, {"params.tools": true}]}),
        json!({"$not": {"metadata.team": "ads"}}),
    ];
    for c in yes {
        assert!(check(c.clone(), Some(&f)), "{c}");
    }
    let no = [
        json!({"params.tools": false}),
        json!({"params.max_tokens": {"$gte": 501}}),
        json!({"params.max_tokens": {"$lt": 500}}),
        json!({"params.model": {"$regex": "^gpt"}}),
        json!({"params.endpoint": {"$in": ["messages", "responses"]}}),
        json!({"$and": [{"params.tools": true}, {"params.has_images": true}]}),
    ];
    for c in no {
        assert!(!check(c.clone(), Some(&f)), "{c}");
    }
}

#[test]
fn a_clause_that_cannot_apply_is_false_and_never_fails() {
    let mut f = facts();
    f.max_tokens = None;
    f.metadata.clear();
    for c in [
        json!({"params.max_tokens": {"$gt": 1}}),
        json!({"params.max_tokens": {"$ne": 1}}),
        json!({"metadata.team": {"$nin": ["ads"]}}),
        json!({"metadata.team": {"$regex": "."}}),
        json!({"metadata.team": {"$exists": true}}),
    ] {
        assert!(!check(c.clone(), Some(&f)), "{c}");
        assert!(!check(c.clone(), None), "no facts: {c}");
    }
    // `$not` negates what its operand evaluated to: no label is "not search".
    assert!(check(
        json!({"$not": {"metadata.team": "search"}}),
        Some(&f)
    ));
    assert!(check(json!({"metadata.team": {"$exists": false}}), None));
}

fn served(c: &crate::config::TenantConfig, name: &str, f: Option<&RequestFacts>) -> Vec<String> {
    let input = RouteInput {
        facts: f,
        ..RouteInput::unmeasured()
    };
    build_chain(c, name, &input)
        .unwrap()
        .candidates
        .iter()
        .map(|c| c.model.id.to_string())
        .collect()
}

fn two_rules_on_best() -> crate::config::TenantConfig {
    let mut c = cfg();
    add_model(&mut c, "m-tools", "openai", 1.0);
    add_model(&mut c, "m-plain", "openai", 1.0);
    add_rule_json(
        &mut c,
        r#"{"name":"best-tools","match":"best","when":{"params.tools":true},"chain":["m-tools"]}"#,
    );
    add_rule_json(
        &mut c,
        r#"{"name":"best-plain","match":"best","priority":10,"chain":["m-plain"]}"#,
    );
    c
}

#[test]
fn the_first_rule_whose_when_holds_gives_the_chain_and_a_rule_without_when_always_holds() {
    let c = two_rules_on_best();
    let mut f = facts();
    assert_eq!(served(&c, "best", Some(&f)), ["m-tools"]);
    f.tools = false;
    assert_eq!(served(&c, "best", Some(&f)), ["m-plain"]);
    assert_eq!(
        served(&c, "best", None),
        ["m-plain"],
        "no facts: the fallback rule"
    );
}

#[test]
fn rules_are_tried_by_priority_then_by_name() {
    let mut c = two_rules_on_best();
    // Same priority as best-plain, and "a" sorts before "best-plain": tried first.
    add_rule_json(
        &mut c,
        r#"{"name":"a","match":"best","priority":10,"chain":["m-tools"]}"#,
    );
    let mut f = facts();
    f.tools = false;
    assert_eq!(served(&c, "best", Some(&f)), ["m-tools"]);
    add_rule_json(
        &mut c,
        r#"{"name":"z","match":"best","priority":-1,"chain":["m-plain"]}"#,
    );
    f.tools = true;
    assert_eq!(
        served(&c, "best", Some(&f)),
        ["m-plain"],
        "priority -1 before the tools rule"
    );
}

#[test]
fn when_no_rule_holds_the_name_resolves_as_if_no_rule_existed() {
    let mut c = cfg();
    add_model(&mut c, "m-tools", "openai", 1.0);
    add_model(&mut c, "m-plain", "openai", 1.0);
    add_rule_json(
        &mut c,
        r#"{"name":"only-tools","match":"m-plain","when":{"params.tools":true},"chain":["m-tools"]}"#,
    );
    add_rule_json(
        &mut c,
        r#"{"name":"ghost","match":"ghost","when":{"params.tools":true},"chain":["m-tools"]}"#,
    );
    let mut f = facts();
    assert_eq!(served(&c, "m-plain", Some(&f)), ["m-tools"]);
    f.tools = false;
    assert_eq!(
        served(&c, "m-plain", Some(&f)),
        ["m-plain"],
        "the model itself"
    );
    let input = RouteInput {
        facts: Some(&f),
        ..RouteInput::unmeasured()
    };
    assert_eq!(
        build_chain(&c, "ghost", &input).err(),
        Some(ChainError::UnknownName("ghost".into())),
        "neither model nor alias: 404"
    );
}

#[test]
fn auto_rule_names_a_rule_by_its_name_whatever_its_when() {
    let c = two_rules_on_best();
    let mut f = facts();
    f.tools = false;
    assert_eq!(served(&c, "auto:best-tools", Some(&f)), ["m-tools"]);
    assert_eq!(served(&c, "auto:best-plain", Some(&f)), ["m-plain"]);
    let input = RouteInput::unmeasured();
    assert!(matches!(
        build_chain(&c, "auto:best", &input),
        Err(ChainError::UnknownChain(_))
    ));
}

#[test]
fn the_matched_rules_on_refusal_and_affinity_are_the_ones_applied() {
    let mut c = cfg();
    add_model(&mut c, "m-tools", "openai", 1.0);
    add_rule_json(
        &mut c,
        r#"{"name":"t","match":"best","when":{"params.tools":true},"chain":["m-tools"],"on_refusal":"fallback","cache_affinity_s":60}"#,
    );
    add_rule_json(
        &mut c,
        r#"{"name":"p","match":"best","priority":1,"chain":["m-tools"]}"#,
    );
    let mut f = facts();
    let input = RouteInput {
        facts: Some(&f),
        ..RouteInput::unmeasured()
    };
    let r = build_chain(&c, "best", &input).unwrap();
    assert_eq!(r.on_refusal, crate::config::OnRefusal::Fallback);
    assert!(r.affinity.is_some());
    assert_eq!(
        super::super::affinity::window_s(&c, "best", Some(&f)),
        Some(60)
    );
    f.tools = false;
    let input = RouteInput {
        facts: Some(&f),
        ..RouteInput::unmeasured()
    };
    let r = build_chain(&c, "best", &input).unwrap();
    assert_eq!(r.on_refusal, crate::config::OnRefusal::Answer);
    assert!(r.affinity.is_none());
    assert_eq!(super::super::affinity::window_s(&c, "best", Some(&f)), None);
}
