//! `prefer_platforms` end to end: an alias's tie goes to the first listed platform, a rule's
//! spread draws on the first listed platform that has a member able to serve, and bad lists are
//! 400 naming the field.

use crate::support::gateway::{Gateway, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::json;

/// Models `m-bed` (on `bed`, platform bedrock) and `m-dir` (on `dir`, platform direct), each on
/// its own mock, at the same price: they tie on everything but platform and id.
fn two_platforms<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider, MockProvider) {
    let (bed, dir) = (
        MockProvider::start("bed").unwrap(),
        MockProvider::start("dir").unwrap(),
    );
    let t = gw.tenant(hint);
    for (name, mock, platform) in [("bed", &bed, "bedrock"), ("dir", &dir, "direct")] {
        t.put_ok(
            &format!("/providers/{name}"),
            json!({"kind": "openai", "base_url": mock.url(), "keys": [format!("sk-{name}")],
                   "platform": platform, "timeout_ms": 5000}),
        );
    }
    t.model("m-bed", "bed", 1.0, 8000);
    t.model("m-dir", "dir", 1.0, 8000);
    (t, bed, dir)
}

fn served(t: &Tenant<'_>, name: &str) -> String {
    let r = t.chat(name);
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-cognigate-model").unwrap_or_default().to_owned()
}

#[test]
fn an_alias_tie_goes_to_the_first_listed_platform_and_without_the_field_to_the_model_id() {
    let gw = Gateway::shared();
    let (t, _bed, _dir) = two_platforms(gw, "pp-alias");
    t.put_ok("/aliases/plain", json!({"capabilities": ["chat"]}));
    t.put_ok(
        "/aliases/direct-first",
        json!({"capabilities": ["chat"], "prefer_platforms": ["direct", "bedrock"]}),
    );
    assert_eq!(served(&t, "plain"), "m-bed", "the model id breaks the tie");
    assert_eq!(served(&t, "direct-first"), "m-dir");
    let shown = gw
        .admin("GET", &t.path("/aliases/direct-first"), None)
        .json();
    assert_eq!(shown["prefer_platforms"], json!(["direct", "bedrock"]));
}

#[test]
fn a_spread_draws_on_the_first_listed_platform_with_a_member_that_can_serve() {
    let gw = Gateway::shared();
    let (t, bed, _dir) = two_platforms(gw, "pp-spread");
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 1, "open_duration_ms": 600000}}),
    );
    let spread =
        json!({"spread": [{"model": "m-dir", "weight": 1}, {"model": "m-bed", "weight": 1}]});
    t.put_ok(
        "/routing-rules",
        json!({"match": "app", "chain": [spread], "prefer_platforms": ["bedrock", "direct"]}),
    );
    let listed = gw.admin("GET", &t.path("/routing-rules"), None).json();
    assert_eq!(
        listed["data"][0]["prefer_platforms"],
        json!(["bedrock", "direct"])
    );
    for _ in 0..12 {
        assert_eq!(served(&t, "app"), "m-bed", "every request on bedrock");
    }
    // Bedrock's member can no longer serve: its breaker opens, and the draw moves to direct.
    bed.push(Rule::any(Reply::status(503)).times(1));
    assert_eq!(t.chat("app").status, 502);
    for _ in 0..4 {
        assert_eq!(served(&t, "app"), "m-dir");
    }
}

#[test]
fn an_unknown_platform_a_duplicate_or_an_empty_list_is_400_naming_the_field() {
    let gw = Gateway::shared();
    let (t, _bed, _dir) = two_platforms(gw, "pp-bad");
    let bad = [
        json!(["direct", "moon"]),
        json!(["azure", "azure"]),
        json!([]),
    ];
    for list in bad {
        let alias = t.put(
            "/aliases/a",
            json!({"capabilities": ["chat"], "prefer_platforms": list}),
        );
        assert_eq!(alias.status, 400, "{}", alias.text);
        assert!(alias.text.contains("prefer_platforms"), "{}", alias.text);
        let rule = t.put(
            "/routing-rules",
            json!({"match": "app", "chain": ["m-dir"], "prefer_platforms": list}),
        );
        assert_eq!(rule.status, 400, "{}", rule.text);
        assert!(rule.text.contains("prefer_platforms"), "{}", rule.text);
    }
    assert_eq!(
        gw.admin("GET", &t.path("/aliases/a"), None).status,
        404,
        "nothing written"
    );
}
