//! `when` validation: every refusal names its JSON path under `when`.

use super::*;
use serde_json::json;

fn when(v: Value) -> Result<When, ConfigError> {
    match v {
        Value::Object(o) => When::parse(o),
        _ => panic!("a test condition is an object"),
    }
}

/// The path a refusal names.
fn refused_at(v: Value) -> String {
    when(v.clone())
        .err()
        .and_then(|e| e.field().map(str::to_owned))
        .unwrap_or_else(|| panic!("accepted: {v}"))
}

#[test]
fn a_bare_value_means_eq_and_several_keys_mean_all_of_them() {
    let w = when(json!({"params.tools": true})).unwrap();
    assert_eq!(
        w.condition(),
        &Condition::Test(Field::Tools, Test::Eq(Scalar::Bool(true)))
    );
    let w = when(json!({"params.stream": false, "metadata.team": "search"})).unwrap();
    assert!(matches!(w.condition(), Condition::All(cs) if cs.len() == 2));
    assert!(w.reads().any && w.reads().metadata && !w.reads().has_images);
    assert_eq!(
        w.json(),
        json!({"params.stream": false, "metadata.team": "search"})
            .as_object()
            .unwrap()
    );
}

#[test]
fn every_operator_and_combinator_is_accepted_on_a_field_of_its_type() {
    let ok = json!({"$and": [
        {"params.max_tokens": {"$gt": 1, "$gte": 1, "$lt": 9, "$lte": 9, "$ne": 5, "$in": [1, 2], "$nin": [3]}},
        {"$or": [{"params.model": {"$regex": "^gpt-"}}, {"$not": {"params.endpoint": {"$in": ["chat", "messages"]}}}]},
        {"metadata.team": {"$exists": true, "$eq": "search"}},
        {"params.has_images": false},
        {"params.endpoint": "responses"}
    ]});
    let w = when(ok).unwrap();
    assert!(w.reads().has_images && w.reads().metadata);
}

#[test]
fn an_unknown_operator_or_key_is_refused_at_its_path() {
    assert_eq!(refused_at(json!({"$foo": 1})), "when.$foo");
    assert_eq!(
        refused_at(
            json!({"$and": [{"params.stream": true}, {"params.max_tokens": {"$between": 1}}]})
        ),
        "when.$and[1].params.max_tokens.$between"
    );
    assert_eq!(
        refused_at(json!({"params.temperature": 1})),
        "when.params.temperature"
    );
    assert_eq!(refused_at(json!({"user": "x"})), "when.user");
    assert_eq!(refused_at(json!({"metadata.": "x"})), "when.metadata.");
}

#[test]
fn a_type_mismatch_is_refused_at_its_path() {
    assert_eq!(
        refused_at(json!({"params.stream": 1})),
        "when.params.stream"
    );
    assert_eq!(
        refused_at(json!({"$and": [{"params.max_tokens": "many"}]})),
        "when.$and[0].params.max_tokens"
    );
    assert_eq!(
        refused_at(json!({"metadata.team": {"$gt": "a"}})),
        "when.metadata.team.$gt"
    );
    assert_eq!(
        refused_at(json!({"params.model": {"$in": "gpt"}})),
        "when.params.model.$in"
    );
    assert_eq!(
        refused_at(json!({"params.model": {"$in": ["a", 2]}})),
        "when.params.model.$in[1]"
    );
    assert_eq!(
        refused_at(json!({"params.endpoint": "embedding"})),
        "when.params.endpoint"
    );
    assert_eq!(
        refused_at(json!({"params.tools": {"$regex": "x"}})),
        "when.params.tools.$regex"
    );
    assert_eq!(refused_at(json!({"$not": [1]})), "when.$not");
    assert_eq!(refused_at(json!({"$or": []})), "when.$or");
    assert_eq!(refused_at(json!({"$or": [1]})), "when.$or[0]");
    assert_eq!(
        refused_at(json!({"metadata.team": {"$exists": "yes"}})),
        "when.metadata.team.$exists"
    );
}

#[test]
fn an_empty_condition_is_refused() {
    assert_eq!(refused_at(json!({})), "when");
    assert_eq!(refused_at(json!({"params.model": {}})), "when.params.model");
}

#[test]
fn a_regex_that_does_not_compile_or_is_too_long_or_too_big_is_refused() {
    assert_eq!(
        refused_at(json!({"params.model": {"$regex": "(unclosed"}})),
        "when.params.model.$regex"
    );
    let long = "a".repeat(MAX_REGEX_CHARS + 1);
    assert_eq!(
        refused_at(json!({"params.model": {"$regex": long}})),
        "when.params.model.$regex"
    );
    assert!(when(json!({"params.model": {"$regex": "a".repeat(MAX_REGEX_CHARS)}})).is_ok());
    // Short, but compiled it would be huge: the size limit refuses it.
    assert_eq!(
        refused_at(json!({"params.model": {"$regex": "(a{1000}){1000}"}})),
        "when.params.model.$regex"
    );
}

fn nested(levels: usize) -> Value {
    (1..levels).fold(
        json!({"params.stream": true}),
        |inner, _| json!({"$not": inner}),
    )
}

#[test]
fn nesting_deeper_than_four_levels_is_refused() {
    assert!(when(nested(MAX_DEPTH)).is_ok());
    assert_eq!(
        refused_at(nested(MAX_DEPTH + 1)),
        "when.$not.$not.$not.$not"
    );
    let deep_and = json!({"$and": [{"$or": [{"$and": [{"$or": [{"params.stream": true}]}]}]}]});
    assert_eq!(refused_at(deep_and), "when.$and[0].$or[0].$and[0].$or[0]");
}

#[test]
fn more_than_32_clauses_are_refused() {
    let clauses = |n: usize| {
        let list: Vec<Value> = (0..n)
            .map(|i| json!({"params.max_tokens": {"$ne": i}}))
            .collect();
        json!({"$or": list})
    };
    assert!(when(clauses(MAX_CLAUSES)).is_ok());
    assert_eq!(
        refused_at(clauses(MAX_CLAUSES + 1)),
        format!("when.$or[{MAX_CLAUSES}].params.max_tokens.$ne")
    );
}

#[test]
fn params_task_and_params_agent_take_only_the_values_the_gateway_detects() {
    let w = when(json!({"params.task": "code", "params.agent": {"$in": ["claude-code", "codex"]}}))
        .unwrap();
    assert!(w.reads().task && w.reads().agent && !w.reads().metadata);
    let agent_only = when(json!({"params.agent": {"$regex": "^openai-"}})).unwrap();
    assert!(agent_only.reads().agent && !agent_only.reads().task);
    assert_eq!(
        refused_at(json!({"params.task": "poetry"})),
        "when.params.task"
    );
    assert_eq!(
        refused_at(json!({"params.agent": {"$in": ["codex", "cursor"]}})),
        "when.params.agent.$in[1]"
    );
    assert_eq!(
        refused_at(json!({"params.task": {"$gt": 1}})),
        "when.params.task.$gt"
    );
    let e = when(json!({"params.task": true})).unwrap_err().to_string();
    assert!(e.contains("must be one of code, chat"), "{e}");
}
