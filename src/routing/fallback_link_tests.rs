use super::*;
use crate::config::{ModelId, RouteName};
use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg};
use crate::routing::{build_chain, ChainError};

/// A tenant whose models are the words of `spec`, each `id[@provider][:price][>link]`: on
/// `openai` at price 1 unless said, its `fallback_model` the model after `>`.
fn catalog(spec: &str) -> TenantConfig {
    let mut c = cfg();
    for word in spec.split_whitespace() {
        let (model, link) = word
            .split_once('>')
            .map_or((word, None), |(m, l)| (m, Some(l)));
        let (model, price) = model
            .split_once(':')
            .map_or((model, 1.0), |(m, p)| (m, p.parse().unwrap()));
        let (id, provider) = model.split_once('@').unwrap_or((model, "openai"));
        add_model(&mut c, id, provider, price);
        c.models.get_mut(id).unwrap().fallback_model = link.map(|l| ModelId::parse(l).unwrap());
    }
    c
}

/// `catalog(spec)` whose tenant `fallback_model` is `name`.
fn catalog_falling_back(spec: &str, name: &str) -> TenantConfig {
    let mut c = catalog(spec);
    c.settings.fallback_model = Some(RouteName::parse(name).unwrap());
    c
}

fn chain(c: &TenantConfig, name: &str) -> (Vec<String>, Vec<&'static str>) {
    let route = build_chain(c, name, &RouteInput::unmeasured()).unwrap();
    (
        route
            .candidates
            .iter()
            .map(|x| x.model.id.to_string())
            .collect(),
        route.appended.iter().map(|v| v.as_str()).collect(),
    )
}

/// The chain `a`, then the tenant fallback `safe` appended as such.
fn a_then_safe() -> (Vec<String>, Vec<&'static str>) {
    (vec!["a".to_owned(), "safe".into()], vec!["tenant_fallback"])
}

fn ids(c: &TenantConfig, name: &str) -> Vec<String> {
    chain(c, name).0
}

#[test]
fn a_model_without_a_link_keeps_its_chain() {
    let c = catalog("a b");
    assert_eq!(chain(&c, "a"), (vec!["a".to_owned()], vec![]));
}

#[test]
fn a_link_is_followed_transitively_after_the_model() {
    let c = catalog("a>b b@together>c c");
    assert_eq!(
        chain(&c, "a"),
        (
            vec!["a".to_owned(), "b".into(), "c".into()],
            vec!["fallback_model", "fallback_model"]
        )
    );
}

#[test]
fn a_loop_ends_the_chain_at_the_first_model_seen_twice() {
    let c = catalog("a>b b@together>a");
    assert_eq!(ids(&c, "a"), ["a", "b"]);
    assert_eq!(ids(&c, "b"), ["b", "a"]);
}

#[test]
fn a_linked_chain_holds_at_most_three_targets_including_the_first() {
    let c = catalog("a>b b>c c>d d");
    assert_eq!(ids(&c, "a"), ["a", "b", "c"]);
}

#[test]
fn max_fallback_depth_caps_a_linked_chain_counting_targets() {
    let mut c = catalog("a>b b>c c");
    c.settings.max_fallback_depth = 2;
    assert_eq!(ids(&c, "a"), ["a", "b"]);
    c.settings.max_fallback_depth = 1;
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn a_dead_link_ends_the_chain_and_is_never_an_error() {
    let c = catalog("a>b b>deleted x>deleted");
    assert_eq!(ids(&c, "a"), ["a", "b"]);
    assert_eq!(ids(&c, "x"), ["x"]);
}

#[test]
fn a_link_to_a_model_whose_provider_is_gone_ends_the_chain_there() {
    let c = catalog("a>orphan orphan@gone>b b");
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn a_matched_rule_uses_its_chain_as_written_without_following_links() {
    let mut c = catalog_falling_back("a>b b c", "c");
    add_rule_json(&mut c, r#"{"match":"r","chain":["a"]}"#);
    assert_eq!(chain(&c, "r"), (vec!["a".to_owned()], vec![]));
    assert_eq!(chain(&c, "auto:r"), (vec!["a".to_owned()], vec![]));
    // A rule matching the model's own id wins over its link too.
    add_rule_json(&mut c, r#"{"match":"a","chain":["a"]}"#);
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn an_alias_follows_the_link_of_the_model_it_resolves_to() {
    let mut c = catalog("cheap>b b@together:5");
    add_alias(&mut c, "fast", r#"{"cost_tier":"cheapest"}"#);
    add_alias(
        &mut c,
        "ranked",
        r#"{"cost_tier":"cheapest","rank_by":"latency"}"#,
    );
    assert_eq!(ids(&c, "fast"), ["cheap", "b"]);
    // Unmeasured, the latency ranking puts `b` first; its link is `cheap`.
    c.models.get_mut("b").unwrap().fallback_model = ModelId::parse("cheap").ok();
    assert_eq!(ids(&c, "ranked"), ["b", "cheap"]);
}

#[test]
fn an_auto_strategy_follows_the_link_of_its_top_model_in_place_of_its_runner_ups() {
    let mut c = catalog("a>z m:2 z:9");
    assert_eq!(ids(&c, "auto:cheap"), ["a", "z"]);
    c.models.get_mut("a").unwrap().fallback_model = None;
    assert_eq!(ids(&c, "auto:cheap"), ["a", "m", "z"], "unchanged without");
}

#[test]
fn the_tenant_fallback_is_appended_after_a_chain_without_a_link() {
    let c = catalog_falling_back("a safe@together", "safe");
    assert_eq!(chain(&c, "a"), a_then_safe());
}

#[test]
fn the_tenant_fallback_may_be_an_alias_and_its_own_link_is_not_followed() {
    let mut c = catalog_falling_back("a@together:5 cheap>b b:2", "budget");
    add_alias(&mut c, "budget", r#"{"cost_tier":"cheapest"}"#);
    assert_eq!(ids(&c, "a"), ["a", "cheap"]);
}

#[test]
fn the_tenant_fallback_is_not_added_twice() {
    let c = catalog_falling_back("safe@together", "safe");
    assert_eq!(chain(&c, "safe"), (vec!["safe".to_owned()], vec![]));
}

#[test]
fn a_models_own_link_overrides_the_tenant_fallback() {
    let c = catalog_falling_back("a>b b safe@together", "safe");
    assert_eq!(ids(&c, "a"), ["a", "b"]);
}

#[test]
fn when_a_dead_link_leaves_no_target_the_tenant_fallback_still_applies() {
    let c = catalog_falling_back("a>deleted safe@together", "safe");
    assert_eq!(chain(&c, "a"), a_then_safe());
}

#[test]
fn a_tenant_fallback_deleted_since_it_was_written_is_skipped() {
    let c = catalog_falling_back("a", "deleted");
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn a_matched_rule_never_gets_the_tenant_fallback() {
    let mut c = catalog_falling_back("a safe@together", "safe");
    add_rule_json(&mut c, r#"{"match":"r","chain":["a"]}"#);
    assert_eq!(ids(&c, "r"), ["a"]);
}

#[test]
fn the_tenant_fallback_applies_to_aliases_and_auto_strategies() {
    let mut c = catalog_falling_back("a m:2 safe@together:9", "safe");
    add_alias(&mut c, "fast", r#"{"cost_tier":"cheapest"}"#);
    assert_eq!(ids(&c, "fast"), ["a", "safe"]);
    assert_eq!(ids(&c, "auto:cheap"), ["a", "safe"]);
}

#[test]
fn a_depth_of_one_leaves_no_room_for_the_tenant_fallback() {
    let mut c = catalog_falling_back("a safe@together", "safe");
    c.settings.max_fallback_depth = 1;
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn an_unknown_name_stays_unknown_whatever_the_tenant_fallback() {
    let c = catalog_falling_back("safe@together", "safe");
    let err = build_chain(&c, "nope", &RouteInput::unmeasured()).err();
    assert_eq!(err, Some(ChainError::UnknownName("nope".into())));
}

#[test]
fn an_auto_strategy_follows_no_link_to_a_model_the_callers_key_may_not_use() {
    let c = catalog("a>z m:2 z:9");
    let may_use = |m: &ModelId| m.as_str() != "z";
    let input = RouteInput {
        may_use: &may_use,
        ..RouteInput::unmeasured()
    };
    let route = build_chain(&c, "auto:cheap", &input).unwrap();
    let ids: Vec<&str> = route
        .candidates
        .iter()
        .map(|x| x.model.id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["a", "m"],
        "the dead link leaves the ranking as it was"
    );
}
