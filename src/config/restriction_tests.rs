//! `restrictions` as written: validated with paths, read back closed when broken.

use super::*;
use serde_json::json;

fn refused_at(v: Value, index: usize) -> String {
    Restriction::parse(&v, index)
        .err()
        .and_then(|e| e.field().map(str::to_owned))
        .unwrap_or_else(|| panic!("accepted: {v}"))
}

#[test]
fn a_restriction_is_a_condition_and_the_platforms_and_providers_it_allows() {
    let written = json!({"when": {"metadata.data_class": "pii"}, "allowed_platforms": ["bedrock"]});
    let r = Restriction::parse(&written, 0).unwrap();
    assert!(r.reads().metadata);
    assert!(r.allows("claude-bedrock", Platform::Bedrock));
    assert!(!r.allows("anthropic", Platform::Direct));
    assert_eq!(
        r.describe(2),
        "restrictions[2] (allowed_platforms [bedrock])"
    );
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        written,
        "shown as written"
    );
    let both = json!({"when": {"params.task": "code"}, "allowed_platforms": ["bedrock", "vertex"],
        "allowed_providers": ["b1"]});
    let both = Restriction::parse(&both, 0).unwrap();
    assert!(both.allows("b1", Platform::Vertex));
    assert!(!both.allows("b2", Platform::Vertex));
    assert!(!both.allows("b1", Platform::Azure));
}

#[test]
fn a_bad_restriction_is_refused_at_its_path() {
    let bedrock = json!(["bedrock"]);
    let cases = [
        (
            json!({"when": {"params.task": "poetry"}, "allowed_platforms": bedrock}),
            "restrictions[1].when.params.task",
        ),
        (json!({"when": {"params.tools": true}}), "restrictions[1]"),
        (
            json!({"when": {"params.tools": true}, "allowed_providers": []}),
            "restrictions[1].allowed_providers",
        ),
        (
            json!({"when": {"params.tools": true}, "allowed_platforms": ["gcp"]}),
            "restrictions[1].allowed_platforms[0]",
        ),
        (
            json!({"when": {"params.tools": true}, "allowed_providers": ["ok", "Not A Name"]}),
            "restrictions[1].allowed_providers[1]",
        ),
        (
            json!({"allowed_platforms": bedrock}),
            "restrictions[1].when",
        ),
        (
            json!({"when": {"params.tools": true}, "allowed_platforms": bedrock, "deny": 1}),
            "restrictions[1].deny",
        ),
        (json!(["when"]), "restrictions[1]"),
    ];
    for (body, path) in cases {
        assert_eq!(refused_at(body, 1), path);
    }
    let one = json!({"when": {"params.tools": true}, "allowed_platforms": ["bedrock"]});
    let many = Value::Array(vec![one; 33]);
    assert_eq!(validate(&many).unwrap_err().field(), Some("restrictions"));
    assert_eq!(
        validate(&json!({})).unwrap_err().field(),
        Some("restrictions")
    );
    assert!(validate(&Value::Null).is_ok());
}

#[test]
fn a_stored_restriction_that_no_longer_validates_applies_to_everything_and_allows_nothing() {
    let broken = json!({"when": {"params.nope": 1}, "allowed_platforms": ["bedrock"]});
    let r = Restriction::read(&broken, 0);
    assert!(r.when.is_none() && r.reads().any);
    assert!(!r.allows("any", Platform::Bedrock));
    assert_eq!(r.body(), &broken, "shown as written");
    assert_eq!(read_all(Some(&json!([broken]))).len(), 1);
    assert!(read_all(None).is_empty());
}
