//! `restrictions` as written: validated with paths, read back closed when broken.

use super::*;
use crate::config::admin_body::parse_body;

fn body(json: &str) -> RestrictionBody {
    parse_body(json.as_bytes()).unwrap()
}

fn refused_at(json: &str, index: usize) -> String {
    Restriction::parse(body(json), index)
        .err()
        .and_then(|e| e.field().map(str::to_owned))
        .unwrap_or_else(|| panic!("accepted: {json}"))
}

#[test]
fn a_restriction_is_a_condition_and_the_platforms_and_providers_it_allows() {
    let r = Restriction::parse(
        body(r#"{"when":{"metadata.data_class":"pii"},"allowed_platforms":["bedrock"]}"#),
        0,
    )
    .unwrap();
    assert!(r.reads().metadata);
    assert!(r.allows("claude-bedrock", Platform::Bedrock));
    assert!(!r.allows("anthropic", Platform::Direct));
    assert_eq!(
        r.describe(2),
        "restrictions[2] (allowed_platforms [bedrock])"
    );
    let both = Restriction::parse(
        body(r#"{"when":{"params.task":"code"},"allowed_platforms":["bedrock","vertex"],"allowed_providers":["b1"]}"#),
        0,
    )
    .unwrap();
    assert!(both.allows("b1", Platform::Vertex));
    assert!(!both.allows("b2", Platform::Vertex));
    assert!(!both.allows("b1", Platform::Azure));
}

#[test]
fn a_bad_restriction_is_refused_at_its_path() {
    assert_eq!(
        refused_at(
            r#"{"when":{"params.task":"poetry"},"allowed_platforms":["bedrock"]}"#,
            1
        ),
        "restrictions[1].when.params.task"
    );
    assert_eq!(
        refused_at(r#"{"when":{"params.tools":true}}"#, 0),
        "restrictions[0]"
    );
    assert_eq!(
        refused_at(
            r#"{"when":{"params.tools":true},"allowed_providers":[]}"#,
            3
        ),
        "restrictions[3].allowed_providers"
    );
    let e =
        parse_body::<RestrictionBody>(br#"{"when":{},"allowed_platforms":["gcp"]}"#).unwrap_err();
    assert_eq!(e.field(), Some("allowed_platforms[0]"));
    let e = parse_body::<RestrictionBody>(br#"{"allowed_platforms":["bedrock"]}"#).unwrap_err();
    assert!(e.to_string().contains("when"), "{e}");
    let many = vec![body(r#"{"when":{"params.tools":true},"allowed_platforms":["bedrock"]}"#); 33];
    assert_eq!(validate(&many).unwrap_err().field(), Some("restrictions"));
}

#[test]
fn a_stored_restriction_that_no_longer_validates_applies_to_everything_and_allows_nothing() {
    let broken = body(r#"{"when":{"params.nope":1},"allowed_platforms":["bedrock"]}"#);
    let r = Restriction::read(&broken, 0);
    assert!(r.when.is_none() && r.reads().any);
    assert!(!r.allows("any", Platform::Bedrock));
    assert_eq!(r.body(), &broken, "shown as written");
}
