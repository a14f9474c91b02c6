//! `prefer_platforms`: an alias's ties sort by it before the model id; a rule's spread position
//! draws among its eligible members on the first listed platform that has one.

use crate::config::cloud::Platform;
use crate::config::Defaults;
use crate::config::{ModelId, ProviderName, TenantConfig};
use crate::routing::observed::ModelHealth;
use crate::routing::resolve::{alias_target, ranked_alias};
use crate::routing::test_config::{add_alias, add_model, add_rule_json, tenant_with, Table};
use crate::routing::{build_chain, RouteInput};

/// Providers on bedrock (`a`), direct (`b`), vertex (`c`) and custom (`d`), one model each at
/// the same price: every alias below ties on everything but platform and id.
fn tenant() -> TenantConfig {
    let mut c = tenant_with(Defaults::default().settings, &["a", "b", "c", "d"]);
    let on = [
        ("a", Platform::Bedrock),
        ("b", Platform::Direct),
        ("c", Platform::Vertex),
    ];
    for (p, platform) in on {
        let provider = c
            .providers
            .get_mut(&ProviderName::parse(p).unwrap())
            .unwrap();
        provider.cloud.platform = Some(platform);
    }
    for p in ["a", "b", "c", "d"] {
        add_model(&mut c, &format!("m{p}"), p, 1.0);
    }
    c
}

fn resolved(c: &TenantConfig, alias: &str) -> String {
    let name = crate::config::AliasName::parse(alias).unwrap();
    alias_target(c, &name)
        .map(|m| m.id.to_string())
        .unwrap_or_default()
}

fn input<'a>(
    observed: &'a Table,
    draw: u64,
    remembered: Option<(&'a ModelId, u64)>,
) -> RouteInput<'a> {
    RouteInput {
        observed,
        now_ms: 1_000,
        draw,
        may_use: &|_| true,
        remembered,
        facts: None,
        pin: None,
    }
}

#[test]
fn an_alias_tie_sorts_by_prefer_platforms_before_the_model_id() {
    let mut c = tenant();
    add_alias(&mut c, "plain", r#"{"capabilities":["chat"]}"#);
    add_alias(
        &mut c,
        "vertex_first",
        r#"{"capabilities":["chat"],"prefer_platforms":["vertex","bedrock"]}"#,
    );
    add_alias(
        &mut c,
        "direct",
        r#"{"capabilities":["chat"],"prefer_platforms":["direct"]}"#,
    );
    assert_eq!(resolved(&c, "plain"), "ma", "without the field: model id");
    assert_eq!(resolved(&c, "vertex_first"), "mc");
    assert_eq!(resolved(&c, "direct"), "mb");
}

#[test]
fn unlisted_platforms_come_last_and_tie_among_themselves_on_the_model_id() {
    let mut c = tenant();
    c.models.remove("mc");
    add_alias(
        &mut c,
        "v",
        r#"{"capabilities":["chat"],"prefer_platforms":["vertex"]}"#,
    );
    assert_eq!(resolved(&c, "v"), "ma");
}

#[test]
fn price_and_the_provider_preference_still_order_before_the_platform() {
    let mut c = tenant();
    c.models.get_mut("md").unwrap().input_price_per_mtok = 0.5;
    add_alias(
        &mut c,
        "cheap",
        r#"{"capabilities":["chat"],"prefer_platforms":["vertex"]}"#,
    );
    add_alias(
        &mut c,
        "pref",
        r#"{"capabilities":["chat"],"provider_preference":["b"],"cost_tier":"best","prefer_platforms":["vertex"]}"#,
    );
    assert_eq!(
        resolved(&c, "cheap"),
        "md",
        "the cheapest wins whatever its platform"
    );
    assert_eq!(resolved(&c, "pref"), "mb", "the preferred provider wins");
}

#[test]
fn a_ranked_alias_tie_sorts_by_prefer_platforms_before_the_model_id() {
    let mut c = tenant();
    add_alias(
        &mut c,
        "fast",
        r#"{"capabilities":["chat"],"rank_by":"latency","prefer_platforms":["vertex","direct"]}"#,
    );
    let alias = c.aliases.get("fast").unwrap().clone();
    let table = Table::default();
    let order: Vec<String> = ranked_alias(&c, &alias, &input(&table, 0, None))
        .iter()
        .map(|m| m.id.to_string())
        .collect();
    assert_eq!(order, ["mc", "mb", "ma", "md"]);
}

fn spread_rule(c: &mut TenantConfig, extra: &str) {
    add_rule_json(
        c,
        &format!(
            r#"{{"match":"x","chain":[{{"spread":[{{"model":"ma","weight":1}},{{"model":"mb","weight":1}},{{"model":"mc","weight":1}}]}}]{extra}}}"#
        ),
    );
}

fn drawn(c: &TenantConfig, observed: &Table, remembered: Option<(&ModelId, u64)>) -> Vec<String> {
    let mut seen: Vec<String> = (0..200u64)
        .map(|d| {
            let route = build_chain(
                c,
                "x",
                &input(observed, d.wrapping_mul(0x9E37_79B9_7F4A_7C15), remembered),
            )
            .unwrap();
            route.candidates[0].model.id.to_string()
        })
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

#[test]
fn a_spread_draws_among_its_members_on_the_first_listed_platform_with_an_eligible_one() {
    let mut c = tenant();
    spread_rule(&mut c, r#","prefer_platforms":["direct","vertex"]"#);
    assert_eq!(drawn(&c, &Table::default(), None), ["mb"]);
    assert_eq!(
        drawn(&c, &Table::open(&["mb"]), None),
        ["mc"],
        "a breaker open"
    );
    let parked = ModelHealth {
        parked_share: 1.0,
        ..ModelHealth::default()
    };
    let all_parked = Table::of([("mb", parked)]);
    assert_eq!(drawn(&c, &all_parked, None), ["mc"], "every key parked");
    let everywhere = Table::of([("mb", parked), ("mc", parked), ("ma", parked)]);
    assert_eq!(
        drawn(&c, &everywhere, None),
        ["ma", "mb", "mc"],
        "none eligible: as without"
    );
    assert_eq!(
        drawn(&c, &Table::open(&["mb", "mc"]), None),
        ["ma"],
        "unlisted last"
    );
}

#[test]
fn without_prefer_platforms_a_spread_draws_among_every_member_as_before() {
    let mut c = tenant();
    spread_rule(&mut c, "");
    assert_eq!(drawn(&c, &Table::default(), None), ["ma", "mb", "mc"]);
}

#[test]
fn cache_affinity_keeps_a_remembered_member_while_it_is_eligible() {
    let mut c = tenant();
    spread_rule(
        &mut c,
        r#","prefer_platforms":["direct"],"cache_affinity_s":60"#,
    );
    let ma = ModelId::parse("ma").unwrap();
    assert_eq!(drawn(&c, &Table::default(), Some((&ma, 900))), ["ma"]);
    let parked = ModelHealth {
        parked_share: 1.0,
        ..ModelHealth::default()
    };
    let gone = Table::of([("ma", parked)]);
    assert_eq!(
        drawn(&c, &gone, Some((&ma, 900))),
        ["mb"],
        "no longer eligible"
    );
}
