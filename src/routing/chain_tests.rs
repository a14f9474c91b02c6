use super::*;
use crate::config::admin_body::{parse_body, AliasBody, ModelBody};
use crate::config::{AliasName, ModelId, RouteName};

use crate::routing::test_config::cfg;

fn add_model(cfg: &mut TenantConfig, id: &str, provider: &str, price: f64, ctx: u32) {
    let json = format!(
        r#"{{"provider":"{provider}","context_window":{ctx},"input_price_per_mtok":{price}}}"#
    );
    let body: ModelBody = parse_body(json.as_bytes()).unwrap();
    let id = ModelId::parse(id).unwrap();
    cfg.models.insert(id.clone(), body.validate(id).unwrap());
}

/// A tenant whose models are on `openai` with an 8000-token context, at the given list prices.
fn on_openai(models: &[(&str, f64)]) -> TenantConfig {
    let mut c = cfg();
    for &(id, price) in models {
        add_model(&mut c, id, "openai", price, 8000);
    }
    c
}

/// Model `small` (8000 tokens) and alias `long`, which asks for 128000: it matches nothing.
fn small_and_long() -> TenantConfig {
    let mut c = on_openai(&[("small", 1.0)]);
    add_alias(
        &mut c,
        "long",
        r#"{"capabilities":["chat"],"min_context_window":128000}"#,
    );
    c
}

fn add_alias(cfg: &mut TenantConfig, name: &str, json: &str) {
    let body: AliasBody = parse_body(json.as_bytes()).unwrap();
    cfg.aliases
        .insert(AliasName::parse(name).unwrap(), body.validate().unwrap());
}

fn add_rule(cfg: &mut TenantConfig, matches: &str, chain: &[&str]) {
    let entries = chain
        .iter()
        .map(|e| crate::config::ChainEntry::Name(RouteName::parse(e).unwrap()))
        .collect();
    cfg.rules.insert(
        RouteName::parse(matches).unwrap(),
        Chain::new(entries, 5).unwrap(),
    );
}

fn ids(r: Result<Route<'_>, ChainError>) -> Vec<String> {
    r.unwrap()
        .candidates
        .iter()
        .map(|c| c.model.id.to_string())
        .collect()
}

fn build_chain<'c>(cfg: &'c TenantConfig, requested: &str) -> Result<Route<'c>, ChainError> {
    super::build_chain(cfg, requested, &RouteInput::unmeasured())
}

#[test]
fn with_no_rule_the_chain_is_the_requested_name() {
    let mut c = cfg();
    add_model(&mut c, "gpt-4o", "openai", 5.0, 128_000);
    assert_eq!(ids(build_chain(&c, "gpt-4o")), ["gpt-4o"]);
}

#[test]
fn rule_chain_is_tried_left_to_right() {
    let mut c = cfg();
    add_model(&mut c, "gpt-4o", "openai", 5.0, 128_000);
    add_model(&mut c, "llama-3.3-70b", "together", 1.0, 128_000);
    add_rule(&mut c, "best", &["llama-3.3-70b", "gpt-4o"]);
    assert_eq!(ids(build_chain(&c, "best")), ["llama-3.3-70b", "gpt-4o"]);
}

#[test]
fn alias_in_a_chain_yields_one_candidate_not_all_of_its_matches() {
    let mut c = on_openai(&[("a", 1.0), ("b", 2.0), ("c", 3.0)]);
    add_alias(
        &mut c,
        "fast",
        r#"{"capabilities":["chat"],"cost_tier":"cheapest"}"#,
    );
    add_rule(&mut c, "x", &["fast", "c"]);
    assert_eq!(ids(build_chain(&c, "x")), ["a", "c"]);
}

#[test]
fn position_that_resolves_to_nothing_is_dropped() {
    let mut c = small_and_long();
    add_rule(&mut c, "x", &["retired-model", "long", "small"]);
    assert_eq!(ids(build_chain(&c, "x")), ["small"]);
}

#[test]
fn model_already_in_the_chain_is_not_tried_twice() {
    let mut c = on_openai(&[("a", 1.0), ("b", 2.0)]);
    add_alias(&mut c, "fast", r#"{"cost_tier":"cheapest"}"#);
    add_rule(&mut c, "x", &["a", "fast", "b", "a"]);
    assert_eq!(ids(build_chain(&c, "x")), ["a", "b"]);
}

#[test]
fn rule_wins_over_a_model_of_the_same_name() {
    let mut c = on_openai(&[("a", 1.0), ("b", 1.0)]);
    add_rule(&mut c, "a", &["b", "a"]);
    assert_eq!(ids(build_chain(&c, "a")), ["b", "a"]);
}

#[test]
fn unknown_name_is_model_not_found() {
    let c = cfg();
    assert_eq!(
        build_chain(&c, "nope").err(),
        Some(ChainError::UnknownName("nope".into()))
    );
}

#[test]
fn known_name_with_no_candidate_names_what_could_not_be_satisfied() {
    let c = small_and_long();
    let err = build_chain(&c, "long").err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("No routing candidate is available for 'long': alias 'long' matches no model (capabilities [chat], min_context_window 128000).")
    );
}

#[test]
fn rule_matching_a_virtual_name_is_known() {
    let mut c = on_openai(&[("a", 1.0)]);
    add_rule(&mut c, "my-app", &["gone", "a"]);
    assert_eq!(ids(build_chain(&c, "my-app")), ["a"]);
}
