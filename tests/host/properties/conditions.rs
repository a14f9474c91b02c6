//! The routing rules' condition language, by property (the project's fuzzing): any `when` a writer can
//! send is either refused or within the bounds (depth ≤ 4, ≤ 32 clauses), and evaluating an
//! accepted one against any request's facts never fails. Failures proptest finds are kept in
//! `conditions.proptest-regressions` beside this file.

use cognigate::config::condition::{When, MAX_CLAUSES, MAX_DEPTH};
use cognigate::routing::condition::holds;
use cognigate::routing::facts::{Endpoint, RequestFacts};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const KEYS: &[&str] = &[
    "params.model",
    "params.stream",
    "params.tools",
    "params.max_tokens",
    "params.has_images",
    "params.endpoint",
    "metadata.team",
    "metadata.tier",
    "params.nope",
    "$foo",
];
const OPS: &[&str] = &[
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$regex", "$exists", "$bad",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        (0u64..2000).prop_map(Value::from),
        prop::sample::select(vec!["chat", "messages", "search", "gpt-4o", "^g.*", "("])
            .prop_map(Value::from),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    let ops = prop::collection::btree_map(
        prop::sample::select(OPS.to_vec()),
        prop_oneof![
            scalar(),
            prop::collection::vec(scalar(), 0..4).prop_map(Value::from)
        ],
        1..3,
    )
    .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()));
    (
        prop::sample::select(KEYS.to_vec()),
        prop_oneof![scalar(), ops],
    )
        .prop_map(|(k, v)| json!({ k: v }))
}

/// Conditions up to seven levels deep, so both sides of every bound are generated.
fn condition() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(7, 96, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..6).prop_map(|v| json!({"$and": v})),
            prop::collection::vec(inner.clone(), 1..6).prop_map(|v| json!({"$or": v})),
            inner.clone().prop_map(|v| json!({"$not": v})),
            (inner.clone(), inner).prop_map(|(a, b)| {
                let mut m: Map<String, Value> = a.as_object().cloned().unwrap_or_default();
                m.extend(b.as_object().cloned().unwrap_or_default());
                Value::Object(m)
            }),
        ]
    })
}

fn facts() -> impl Strategy<Value = Option<RequestFacts>> {
    let f = (
        prop::sample::select(vec!["best", "gpt-4o", ""]),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(0u64..3000),
        any::<bool>(),
        prop::sample::select(vec![
            Endpoint::Chat,
            Endpoint::Messages,
            Endpoint::Responses,
            Endpoint::Embeddings,
        ]),
        prop::option::of(prop::sample::select(vec!["search", "ads"])),
    )
        .prop_map(
            |(model, stream, tools, max_tokens, has_images, endpoint, team)| RequestFacts {
                model: model.to_owned(),
                stream,
                tools,
                max_tokens,
                has_images,
                endpoint,
                metadata: team
                    .map(|t| [("team".to_owned(), t.to_owned())].into_iter().collect())
                    .unwrap_or_default(),
                task: None,
                agent: None,
            },
        );
    prop::option::of(f)
}

/// Levels of condition objects (the `when` object is 1) and comparisons, read from the JSON.
fn measure(v: &Value, level: usize, depth: &mut usize, clauses: &mut usize) {
    *depth = (*depth).max(level);
    let Some(obj) = v.as_object() else { return };
    for (k, v) in obj {
        match k.as_str() {
            "$and" | "$or" => v
                .as_array()
                .into_iter()
                .flatten()
                .for_each(|c| measure(c, level + 1, depth, clauses)),
            "$not" => measure(v, level + 1, depth, clauses),
            _ => match v.as_object() {
                Some(ops) => *clauses += ops.len(),
                None => *clauses += 1,
            },
        }
    }
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn an_accepted_condition_is_within_the_depth_and_clause_bounds(c in condition()) {
        if When::parse(c.as_object().cloned().unwrap()).is_ok() {
            let (mut depth, mut clauses) = (0, 0);
            measure(&c, 1, &mut depth, &mut clauses);
            prop_assert!(depth <= MAX_DEPTH, "depth {depth}: {c}");
            prop_assert!(clauses <= MAX_CLAUSES, "{clauses} clauses: {c}");
        }
    }

    #[test]
    fn a_refused_condition_names_a_path_under_when(c in condition()) {
        if let Err(e) = When::parse(c.as_object().cloned().unwrap()) {
            let field = e.field().unwrap_or_default().to_owned();
            prop_assert!(field == "when" || field.starts_with("when."), "{field}");
        }
    }

    #[test]
    fn evaluation_never_fails_and_not_negates(c in condition(), f in facts()) {
        if let Ok(w) = When::parse(c.as_object().cloned().unwrap()) {
            let held = holds(w.condition(), f.as_ref());
            let negated = When::parse(json!({"$not": c}).as_object().cloned().unwrap());
            if let Ok(n) = negated {
                prop_assert_eq!(holds(n.condition(), f.as_ref()), !held);
            }
        }
    }

    #[test]
    fn nesting_is_accepted_exactly_up_to_four_levels(levels in 1usize..9) {
        let c = (1..levels).fold(json!({"params.stream": true}), |inner, _| json!({"$or": [inner]}));
        prop_assert_eq!(When::parse(c.as_object().cloned().unwrap()).is_ok(), levels <= MAX_DEPTH);
    }

    #[test]
    fn clauses_are_accepted_exactly_up_to_32(n in 1usize..64) {
        let list: Vec<Value> = (0..n).map(|i| json!({"params.max_tokens": {"$ne": i}})).collect();
        let c = json!({"$and": list});
        prop_assert_eq!(When::parse(c.as_object().cloned().unwrap()).is_ok(), n <= MAX_CLAUSES);
    }
}
