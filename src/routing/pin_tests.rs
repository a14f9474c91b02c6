//! The provider pin through `build_chain`: every position resolves among the pinned provider's
//! models, so it still contributes one candidate, now of that provider.

use crate::config::TenantConfig;
use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg, Table};
use crate::routing::{build_chain, ChainError, RouteInput};

/// openai: `o-cheap` (1), `o-mid` (4); together: `t-mid` (3), `t-dear` (6).
fn tenant() -> TenantConfig {
    let mut c = cfg();
    c.settings.exploration_share = 0.0;
    for (id, provider, price) in [
        ("o-cheap", "openai", 1.0),
        ("o-mid", "openai", 4.0),
        ("t-mid", "together", 3.0),
        ("t-dear", "together", 6.0),
    ] {
        add_model(&mut c, id, provider, price);
    }
    c
}

fn pinned(c: &TenantConfig, name: &str, pin: &str, draw: u64) -> Result<Vec<String>, ChainError> {
    let pin = crate::routing::pin::parse(c, Some(pin), None)
        .unwrap()
        .unwrap();
    let observed = Table::default();
    let input = RouteInput {
        observed: &observed,
        draw,
        pin: Some(&pin),
        ..RouteInput::unmeasured()
    };
    build_chain(c, name, &input).map(|r| {
        r.candidates
            .iter()
            .map(|x| x.model.id.to_string())
            .collect()
    })
}

#[test]
fn the_pin_keeps_only_that_providers_candidates_wherever_they_sit_in_the_chain() {
    let mut c = tenant();
    add_rule_json(
        &mut c,
        r#"{"match":"app","chain":["o-cheap","t-dear","o-mid","t-mid"]}"#,
    );
    assert_eq!(
        pinned(&c, "app", "together", 0).unwrap(),
        ["t-dear", "t-mid"]
    );
    assert_eq!(
        pinned(&c, "app", "openai", 0).unwrap(),
        ["o-cheap", "o-mid"]
    );
}

#[test]
fn an_alias_position_under_a_pin_resolves_among_that_providers_models() {
    let mut c = tenant();
    add_alias(&mut c, "cheap", r#"{"cost_tier":"cheapest"}"#);
    add_alias(&mut c, "quick", r#"{"rank_by":"latency"}"#);
    // Unpinned, `cheap` is o-cheap; pinned to together it is together's cheapest.
    assert_eq!(pinned(&c, "cheap", "openai", 0).unwrap(), ["o-cheap"]);
    assert_eq!(pinned(&c, "cheap", "together", 0).unwrap(), ["t-mid"]);
    // A ranked alias ranks that provider's models only (unmeasured: ties on model id).
    assert_eq!(pinned(&c, "quick", "together", 0).unwrap(), ["t-dear"]);
}

#[test]
fn an_alias_pin_on_another_provider_falls_through_to_the_constraints_under_the_pin() {
    let mut c = tenant();
    add_alias(&mut c, "pinned", r#"{"pin":"o-mid","cost_tier":"best"}"#);
    assert_eq!(pinned(&c, "pinned", "openai", 0).unwrap(), ["o-mid"]);
    assert_eq!(pinned(&c, "pinned", "together", 0).unwrap(), ["t-dear"]);
}

#[test]
fn a_spread_under_a_pin_draws_among_that_providers_members_only() {
    let mut c = tenant();
    add_rule_json(
        &mut c,
        r#"{"match":"app","chain":[{"spread":[{"model":"o-cheap","weight":1000},{"model":"t-mid","weight":1}]}]}"#,
    );
    for d in [0, 1, u64::MAX / 3, u64::MAX / 2, u64::MAX] {
        assert_eq!(pinned(&c, "app", "together", d).unwrap(), ["t-mid"]);
    }
}

#[test]
fn an_auto_strategy_under_a_pin_ranks_that_providers_models_only() {
    let c = tenant();
    assert_eq!(
        pinned(&c, "auto:cheap", "together", 0).unwrap(),
        ["t-mid", "t-dear"]
    );
}

#[test]
fn a_pin_leaving_no_candidate_is_no_candidates_naming_the_pin() {
    let mut c = tenant();
    add_rule_json(&mut c, r#"{"match":"app","chain":["o-cheap","o-mid"]}"#);
    let Err(ChainError::NoCandidates { name, reasons }) = pinned(&c, "app", "together", 0) else {
        panic!("expected no_candidates");
    };
    assert_eq!(name, "app");
    assert!(
        reasons.starts_with("X-CogniGate-Pin-Provider 'together' leaves no candidate"),
        "{reasons}"
    );
    assert!(reasons.contains("model 'o-cheap' is on provider 'openai', not the pinned 'together'"));
    let mut empty = cfg();
    add_model(&mut empty, "o", "openai", 1.0);
    let err = pinned(&empty, "auto", "together", 0)
        .err()
        .map(|e| e.to_string());
    assert!(err.is_some_and(|e| e.contains("'together' leaves no candidate")));
}

#[test]
fn an_unknown_name_stays_404_under_a_pin() {
    let c = tenant();
    assert_eq!(
        pinned(&c, "nope", "openai", 0),
        Err(ChainError::UnknownName("nope".into()))
    );
}

#[test]
fn an_id_of_another_provider_reaches_its_dated_sibling_on_the_pinned_one() {
    let mut c = cfg();
    add_model(&mut c, "claude-haiku-4-5-20251001", "openai", 1.0);
    add_model(&mut c, "claude-haiku-4-5@20251001", "together", 1.0);
    assert_eq!(
        pinned(&c, "claude-haiku-4-5-20251001", "together", 0).unwrap(),
        ["claude-haiku-4-5@20251001"]
    );
    assert_eq!(
        pinned(&c, "claude-haiku-4-5", "together", 0).unwrap(),
        ["claude-haiku-4-5@20251001"]
    );
}

#[test]
fn a_remembered_model_of_another_provider_is_not_put_back_under_the_pin() {
    let mut c = tenant();
    add_rule_json(
        &mut c,
        r#"{"match":"app","chain":["t-mid","o-cheap"],"cache_affinity_s":60}"#,
    );
    let pin = crate::routing::pin::parse(&c, Some("together"), None)
        .unwrap()
        .unwrap();
    let remembered = crate::config::ModelId::parse("o-cheap").unwrap();
    let input = RouteInput {
        remembered: Some((&remembered, 0)),
        now_ms: 1_000,
        pin: Some(&pin),
        ..RouteInput::unmeasured()
    };
    let r = build_chain(&c, "app", &input).unwrap();
    let ids: Vec<&str> = r.candidates.iter().map(|x| x.model.id.as_str()).collect();
    assert_eq!(ids, ["t-mid"]);
    assert_eq!(r.affinity, Some(crate::routing::AffinityUse::Miss));
}
