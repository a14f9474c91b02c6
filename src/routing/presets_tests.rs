//! Host tests of the chain presets: each preset's order, ties kept, and what each kind of
//! position sorts by.

use super::*;
use crate::config::admin_body::{parse_body, RuleBody};
use crate::routing::test_config::{add_alias, add_model_json, cfg, Table};
use crate::routing::ModelHealth;

/// Models with (list price, quality rank): a (2, 2), b (6, 1), c (4, -), d (8, -), e (2, -),
/// f (6, 1).
fn tenant() -> TenantConfig {
    let mut c = cfg();
    for (id, price, rank) in [
        ("a", 2.0, Some(2)),
        ("b", 6.0, Some(1)),
        ("c", 4.0, None),
        ("d", 8.0, None),
        ("e", 2.0, None),
        ("f", 6.0, Some(1)),
    ] {
        let rank = rank.map_or(String::new(), |r| format!(r#","quality_rank":{r}"#));
        let fields = format!(r#""input_price_per_mtok":{price}{rank}"#);
        add_model_json(&mut c, id, "openai", &fields);
    }
    c
}

fn chain(entries: &str) -> Chain {
    let body = format!(r#"{{"match":"r","chain":{entries},"cache_ttl_s":60}}"#);
    parse_body::<RuleBody>(body.as_bytes())
        .unwrap()
        .validate(20)
        .unwrap()
        .chain
}

fn sorted(c: &TenantConfig, entries: &str, preset: ChainPreset, observed: &Table) -> String {
    let input = RouteInput {
        observed,
        ..RouteInput::unmeasured()
    };
    let out = sorted_chain(c, &chain(entries), preset, &input);
    assert_eq!(out.cache_ttl_s(), Some(60), "only the order changes");
    serde_json::to_string(&out).unwrap()
}

/// `entries` sorted by `preset` in `tenant()`, with no stats.
fn unmeasured(entries: &str, preset: ChainPreset) -> String {
    sorted(&tenant(), entries, preset, &Table::default())
}

fn latency(ms: f64) -> ModelHealth {
    ModelHealth {
        latency_ms: Some(ms),
        ..ModelHealth::default()
    }
}

#[test]
fn smartest_sorts_by_quality_rank_then_unranked_positions_by_list_price_descending() {
    let out = unmeasured(r#"["e","a","c","f","d","b"]"#, ChainPreset::Smartest);
    assert_eq!(
        out, r#"["f","b","a","d","c","e"]"#,
        "f and b tie at rank 1: kept in order"
    );
}

#[test]
fn fastest_sorts_by_measured_latency_and_positions_without_stats_follow_in_order() {
    let c = tenant();
    let stats = Table::of([
        ("a", latency(300.0)),
        ("b", latency(100.0)),
        ("d", latency(300.0)),
    ]);
    let out = sorted(&c, r#"["e","d","c","a","b"]"#, ChainPreset::Fastest, &stats);
    assert_eq!(out, r#"["b","d","a","e","c"]"#);
    let served_unmeasured = Table::of([("a", ModelHealth::default())]);
    let out = sorted(&c, r#"["c","a"]"#, ChainPreset::Fastest, &served_unmeasured);
    assert_eq!(out, r#"["c","a"]"#, "no latency: no stats to sort by");
}

#[test]
fn budget_sorts_by_list_price_ascending_with_ties_in_their_current_order() {
    let out = unmeasured(r#"["d","e","b","a","c","f"]"#, ChainPreset::Budget);
    assert_eq!(out, r#"["e","a","c","b","f","d"]"#);
}

#[test]
fn an_alias_sorts_as_its_resolved_model_and_a_spread_as_its_highest_weight_member() {
    let mut c = tenant();
    add_alias(&mut c, "cheap", r#"{"capabilities":["chat"]}"#);
    // `cheap` resolves to a (2, the first of the cheapest by id); the spread leads with d (8).
    let spread = r#"{"spread":[{"model":"a","weight":1},{"model":"d","weight":3},{"model":"b","weight":3}]}"#;
    let entries = format!(r#"[{spread},"c","cheap"]"#);
    let out = sorted(&c, &entries, ChainPreset::Budget, &Table::default());
    assert_eq!(out, format!(r#"["cheap","c",{spread}]"#));
    let spread_entry: ChainEntry = serde_json::from_str(spread).unwrap();
    assert_eq!(
        leading_name(&spread_entry).unwrap().as_str(),
        "d",
        "the first of the heaviest"
    );
}

#[test]
fn a_position_that_resolves_to_no_model_today_sorts_last_and_no_position_is_lost() {
    let c = tenant();
    for preset in [
        ChainPreset::Smartest,
        ChainPreset::Fastest,
        ChainPreset::Budget,
    ] {
        let out = sorted(&c, r#"["gone","d","a"]"#, preset, &Table::default());
        let mut names: Vec<String> = serde_json::from_str(&out).unwrap();
        assert_eq!(names.last().map(String::as_str), Some("gone"), "{preset:?}");
        names.sort();
        assert_eq!(names, ["a", "d", "gone"], "{preset:?}");
    }
}

#[test]
fn the_order_is_a_stable_sort_of_the_keys() {
    let c = tenant();
    let m = |id: &str| c.models.get(id);
    let p = |id: &str, ms: Option<f64>| Position {
        model: m(id),
        latency_ms: ms,
    };
    let positions = [
        p("c", None),
        p("a", Some(5.0)),
        p("zzz", None),
        p("e", Some(5.0)),
    ];
    assert_eq!(preset_order(&positions, ChainPreset::Fastest), [1, 3, 0, 2]);
    assert_eq!(preset_order(&[], ChainPreset::Budget), Vec::<usize>::new());
}
