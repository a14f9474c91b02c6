use super::*;
use crate::config::{ModelId, RouteName};
use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg};
use crate::routing::{build_chain, ChainError};

/// A model on `provider` whose `fallback_model` is `link`.
fn linked(c: &mut TenantConfig, id: &str, provider: &str, price: f64, link: Option<&str>) {
    add_model(c, id, provider, price);
    if let Some(m) = c.models.get_mut(id) {
        m.fallback_model = link.map(|l| ModelId::parse(l).unwrap());
    }
}

fn with_fallback(c: &mut TenantConfig, name: &str) {
    c.settings.fallback_model = Some(RouteName::parse(name).unwrap());
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

fn ids(c: &TenantConfig, name: &str) -> Vec<String> {
    chain(c, name).0
}

#[test]
fn a_model_without_a_link_keeps_its_chain() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, None);
    linked(&mut c, "b", "openai", 1.0, None);
    assert_eq!(chain(&c, "a"), (vec!["a".to_owned()], vec![]));
}

#[test]
fn a_link_is_followed_transitively_after_the_model() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "together", 1.0, Some("c"));
    linked(&mut c, "c", "openai", 1.0, None);
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
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "together", 1.0, Some("a"));
    assert_eq!(ids(&c, "a"), ["a", "b"]);
    assert_eq!(ids(&c, "b"), ["b", "a"]);
}

#[test]
fn a_linked_chain_holds_at_most_three_targets_including_the_first() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "openai", 1.0, Some("c"));
    linked(&mut c, "c", "openai", 1.0, Some("d"));
    linked(&mut c, "d", "openai", 1.0, None);
    assert_eq!(ids(&c, "a"), ["a", "b", "c"]);
}

#[test]
fn max_fallback_depth_caps_a_linked_chain_counting_targets() {
    let mut c = cfg();
    c.settings.max_fallback_depth = 2;
    linked(&mut c, "a", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "openai", 1.0, Some("c"));
    linked(&mut c, "c", "openai", 1.0, None);
    assert_eq!(ids(&c, "a"), ["a", "b"]);
    c.settings.max_fallback_depth = 1;
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn a_dead_link_ends_the_chain_and_is_never_an_error() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "openai", 1.0, Some("deleted"));
    linked(&mut c, "x", "openai", 1.0, Some("deleted"));
    assert_eq!(ids(&c, "a"), ["a", "b"]);
    assert_eq!(ids(&c, "x"), ["x"]);
}

#[test]
fn a_link_to_a_model_whose_provider_is_gone_ends_the_chain_there() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("orphan"));
    linked(&mut c, "orphan", "gone", 1.0, Some("b"));
    linked(&mut c, "b", "openai", 1.0, None);
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn a_matched_rule_uses_its_chain_as_written_without_following_links() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "openai", 1.0, None);
    linked(&mut c, "c", "openai", 1.0, None);
    with_fallback(&mut c, "c");
    add_rule_json(&mut c, r#"{"match":"r","chain":["a"]}"#);
    assert_eq!(chain(&c, "r"), (vec!["a".to_owned()], vec![]));
    assert_eq!(chain(&c, "auto:r"), (vec!["a".to_owned()], vec![]));
    // A rule matching the model's own id wins over its link too.
    add_rule_json(&mut c, r#"{"match":"a","chain":["a"]}"#);
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn an_alias_follows_the_link_of_the_model_it_resolves_to() {
    let mut c = cfg();
    linked(&mut c, "cheap", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "together", 5.0, None);
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
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("z"));
    linked(&mut c, "m", "openai", 2.0, None);
    linked(&mut c, "z", "openai", 9.0, None);
    assert_eq!(ids(&c, "auto:cheap"), ["a", "z"]);
    c.models.get_mut("a").unwrap().fallback_model = None;
    assert_eq!(ids(&c, "auto:cheap"), ["a", "m", "z"], "unchanged without");
}

#[test]
fn the_tenant_fallback_is_appended_after_a_chain_without_a_link() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, None);
    linked(&mut c, "safe", "together", 1.0, None);
    with_fallback(&mut c, "safe");
    assert_eq!(
        chain(&c, "a"),
        (vec!["a".to_owned(), "safe".into()], vec!["tenant_fallback"])
    );
}

#[test]
fn the_tenant_fallback_may_be_an_alias_and_its_own_link_is_not_followed() {
    let mut c = cfg();
    linked(&mut c, "a", "together", 5.0, None);
    linked(&mut c, "cheap", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "openai", 2.0, None);
    add_alias(&mut c, "budget", r#"{"cost_tier":"cheapest"}"#);
    with_fallback(&mut c, "budget");
    assert_eq!(ids(&c, "a"), ["a", "cheap"]);
}

#[test]
fn the_tenant_fallback_is_not_added_twice() {
    let mut c = cfg();
    linked(&mut c, "safe", "together", 1.0, None);
    with_fallback(&mut c, "safe");
    assert_eq!(chain(&c, "safe"), (vec!["safe".to_owned()], vec![]));
}

#[test]
fn a_models_own_link_overrides_the_tenant_fallback() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("b"));
    linked(&mut c, "b", "openai", 1.0, None);
    linked(&mut c, "safe", "together", 1.0, None);
    with_fallback(&mut c, "safe");
    assert_eq!(ids(&c, "a"), ["a", "b"]);
}

#[test]
fn when_a_dead_link_leaves_no_target_the_tenant_fallback_still_applies() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("deleted"));
    linked(&mut c, "safe", "together", 1.0, None);
    with_fallback(&mut c, "safe");
    assert_eq!(
        chain(&c, "a"),
        (vec!["a".to_owned(), "safe".into()], vec!["tenant_fallback"])
    );
}

#[test]
fn a_tenant_fallback_deleted_since_it_was_written_is_skipped() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, None);
    with_fallback(&mut c, "deleted");
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn a_matched_rule_never_gets_the_tenant_fallback() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, None);
    linked(&mut c, "safe", "together", 1.0, None);
    with_fallback(&mut c, "safe");
    add_rule_json(&mut c, r#"{"match":"r","chain":["a"]}"#);
    assert_eq!(ids(&c, "r"), ["a"]);
}

#[test]
fn the_tenant_fallback_applies_to_aliases_and_auto_strategies() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, None);
    linked(&mut c, "m", "openai", 2.0, None);
    linked(&mut c, "safe", "together", 9.0, None);
    add_alias(&mut c, "fast", r#"{"cost_tier":"cheapest"}"#);
    with_fallback(&mut c, "safe");
    assert_eq!(ids(&c, "fast"), ["a", "safe"]);
    assert_eq!(ids(&c, "auto:cheap"), ["a", "safe"]);
}

#[test]
fn a_depth_of_one_leaves_no_room_for_the_tenant_fallback() {
    let mut c = cfg();
    c.settings.max_fallback_depth = 1;
    linked(&mut c, "a", "openai", 1.0, None);
    linked(&mut c, "safe", "together", 1.0, None);
    with_fallback(&mut c, "safe");
    assert_eq!(ids(&c, "a"), ["a"]);
}

#[test]
fn an_unknown_name_stays_unknown_whatever_the_tenant_fallback() {
    let mut c = cfg();
    linked(&mut c, "safe", "together", 1.0, None);
    with_fallback(&mut c, "safe");
    let err = build_chain(&c, "nope", &RouteInput::unmeasured()).err();
    assert_eq!(err, Some(ChainError::UnknownName("nope".into())));
}

#[test]
fn an_auto_strategy_follows_no_link_to_a_model_the_callers_key_may_not_use() {
    let mut c = cfg();
    linked(&mut c, "a", "openai", 1.0, Some("z"));
    linked(&mut c, "m", "openai", 2.0, None);
    linked(&mut c, "z", "openai", 9.0, None);
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
