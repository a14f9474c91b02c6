//! Weighted spreads through `build_chain`: one candidate per spread position, drawn by weight
//! among members that resolve and whose breaker is not open.

use crate::config::TenantConfig;
use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg, Table};
use crate::routing::{build_chain, dead_entries, ChainError, RouteInput};

fn tenant(chain: &str) -> TenantConfig {
    let mut c = cfg();
    add_model(&mut c, "m1", "openai", 1.0);
    add_model(&mut c, "m2", "together", 2.0);
    add_model(&mut c, "m3", "openai", 3.0);
    add_alias(&mut c, "cheap", r#"{"cost_tier":"cheapest"}"#);
    add_rule_json(&mut c, &format!(r#"{{"match":"x","chain":{chain}}}"#));
    c
}

fn ids(c: &TenantConfig, observed: &Table, draw: u64) -> Result<Vec<String>, ChainError> {
    let input = RouteInput {
        observed,
        now_ms: 0,
        draw,
        may_use: &|_| true,
        remembered: None,
        facts: None,
        pin: None,
    };
    let r = build_chain(c, "x", &input)?;
    assert_eq!(r.affinity, None);
    Ok(r.candidates
        .iter()
        .map(|c| c.model.id.to_string())
        .collect())
}

const THREE_TO_ONE: &str =
    r#"[{"spread":[{"model":"m1","weight":3},{"model":"m2","weight":1}]},"m3"]"#;

#[test]
fn a_spread_position_still_contributes_one_candidate() {
    let c = tenant(THREE_TO_ONE);
    let mut on_m1 = 0;
    for d in 0..4_000u64 {
        let chain = ids(&c, &Table::default(), d.wrapping_mul(0x9E37_79B9_7F4A_7C15)).unwrap();
        assert_eq!(chain.len(), 2, "{chain:?}");
        assert_eq!(chain[1], "m3");
        on_m1 += usize::from(chain[0] == "m1");
    }
    assert!((2_800..3_200).contains(&on_m1), "{on_m1} of 4000 on m1");
}

#[test]
fn a_member_with_an_open_breaker_is_never_drawn() {
    let c = tenant(THREE_TO_ONE);
    for d in [0, 1, u64::MAX / 4, u64::MAX / 2, u64::MAX] {
        assert_eq!(ids(&c, &Table::open(&["m1"]), d).unwrap(), ["m2", "m3"]);
    }
    // Every member open: the position yields nothing and the chain goes on.
    assert_eq!(ids(&c, &Table::open(&["m1", "m2"]), 0).unwrap(), ["m3"]);
}

#[test]
fn a_member_that_resolves_to_nothing_is_never_drawn() {
    let c = tenant(r#"[{"spread":[{"model":"gone","weight":100},{"model":"cheap","weight":1}]}]"#);
    for d in [0, u64::MAX / 2, u64::MAX] {
        assert_eq!(ids(&c, &Table::default(), d).unwrap(), ["m1"]);
    }
}

#[test]
fn a_drawn_model_already_in_the_chain_is_not_tried_twice() {
    let c = tenant(r#"["m1",{"spread":[{"model":"m1","weight":1}]},"m2"]"#);
    assert_eq!(ids(&c, &Table::default(), 0).unwrap(), ["m1", "m2"]);
}

#[test]
fn a_spread_that_cannot_serve_names_its_members_in_the_error() {
    let c = tenant(r#"[{"spread":[{"model":"m1","weight":1},{"model":"gone","weight":1}]}]"#);
    let err = ids(&c, &Table::open(&["m1"]), 0)
        .err()
        .map(|e| e.to_string());
    let err = err.unwrap();
    assert!(
        err.contains("'m1' has its breaker open") && err.contains("'gone'"),
        "{err}"
    );
}

#[test]
fn dead_entries_cover_spread_members_that_resolve_to_nothing() {
    let c = tenant(r#"["m1",{"spread":[{"model":"gone","weight":1},{"model":"m2","weight":1}]}]"#);
    let rule = c.rules.values().next().unwrap();
    let dead = dead_entries(&c, rule.entries(), |_| true);
    assert_eq!(dead, ["'gone' is neither a model nor an alias"]);
}
