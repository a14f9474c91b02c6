//! Loose version matching and `prefer_newest_version`, through the
//! functions the request path calls: `split`, `lookup`, `build_chain` and the alias ranking.

use super::*;
use crate::config::{AliasName, TenantConfig};
use crate::routing::resolve::{alias_model, ranked_alias, resolve_aliases};
use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg, Table};
use crate::routing::{build_chain, dead_entries, lookup, ChainError, RouteInput, Target};

fn day(ymd: u32) -> Option<VersionDate> {
    VersionDate::new(ymd / 10_000, ymd / 100 % 100, ymd % 100)
}

/// The tenant's catalog: these ids on `openai`, price 1 each unless stated.
fn catalog(ids: &[&str]) -> TenantConfig {
    let mut c = cfg();
    for id in ids {
        add_model(&mut c, id, "openai", 1.0);
    }
    c
}

fn served(c: &TenantConfig, name: &str) -> Result<Vec<String>, ChainError> {
    build_chain(c, name, &RouteInput::unmeasured()).map(|r| {
        r.candidates
            .iter()
            .map(|x| x.model.id.to_string())
            .collect()
    })
}

#[test]
fn a_date_is_a_trailing_dash_yyyymmdd_dash_yyyy_mm_dd_or_at_yyyymmdd() {
    let base = "claude-haiku-4-5";
    for id in [
        "claude-haiku-4-5-20251001",
        "claude-haiku-4-5-2025-10-01",
        "claude-haiku-4-5@20251001",
    ] {
        assert_eq!(split(id), (base, day(20251001)), "{id}");
    }
    assert_eq!(split("gpt-4o-2024-08-06"), ("gpt-4o", day(20240806)));
    assert_eq!(split(base), (base, None));
    // Only the last date is the version; what precedes it is the base, kept whole.
    assert_eq!(split("x-20240101-20250101"), ("x-20240101", day(20250101)));
}

#[test]
fn a_date_must_be_a_real_day_of_2000_to_2099_else_it_is_part_of_the_name() {
    for id in [
        "m-20251301",   // month 13
        "m-20250230",   // 30 February
        "m-2023-02-29", // not a leap year
        "m-19991231",   // before 2000
        "m-21000101",   // after 2099
        "m-12345678",   // a build number
        "m-2025-1001",  // neither form
        "m_20251001",   // not a separator
        "m@2025-10-01", // `@` takes only the compact form
        "m-2025100",    // seven digits
        "m-+2025101",   // a sign is no digit
        "gpt-4-0613",   // no year
    ] {
        assert_eq!(split(id), (id, None), "{id}");
    }
    assert_eq!(split("m-2024-02-29").1, day(20240229), "a leap day");
    assert_eq!(split("m-20000229").1, day(20000229), "2000 was a leap year");
    assert_eq!(split("20251001").1, None, "a date alone has no base");
}

#[test]
fn an_undated_name_reaches_its_dated_catalog_id() {
    let c = catalog(&["claude-haiku-4-5-20251001", "gpt-4o"]);
    assert_eq!(
        served(&c, "claude-haiku-4-5").unwrap(),
        ["claude-haiku-4-5-20251001"]
    );
    let at = catalog(&["claude-haiku-4-5@20251001"]);
    assert_eq!(
        served(&at, "claude-haiku-4-5").unwrap(),
        ["claude-haiku-4-5@20251001"]
    );
}

#[test]
fn when_several_match_the_newest_date_wins() {
    let c = catalog(&[
        "claude-haiku-4-5-20250101",
        "claude-haiku-4-5-2025-10-01",
        "claude-haiku-4-5@20250601",
    ]);
    assert_eq!(
        served(&c, "claude-haiku-4-5").unwrap(),
        ["claude-haiku-4-5-2025-10-01"]
    );
}

#[test]
fn exact_ids_always_win() {
    let c = catalog(&["claude-haiku-4-5", "claude-haiku-4-5-20251001"]);
    assert_eq!(
        served(&c, "claude-haiku-4-5").unwrap(),
        ["claude-haiku-4-5"]
    );
    let old = catalog(&["m-20240101", "m-20251001"]);
    assert_eq!(served(&old, "m-20240101").unwrap(), ["m-20240101"]);
}

#[test]
fn a_match_never_crosses_families_or_major_versions() {
    let c = catalog(&["claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"]);
    for name in [
        "claude-haiku-5",
        "claude-haiku-4",
        "claude-haiku-4-5-1",
        "claude-haiku",
        "claude-opus-4-5",
        "Claude-haiku-4-5",
    ] {
        assert_eq!(
            served(&c, name),
            Err(ChainError::UnknownName(name.to_owned())),
            "{name}"
        );
    }
}

#[test]
fn a_dated_request_reaches_the_same_date_spelled_another_way_first_then_the_newest() {
    let c = catalog(&[
        "claude-haiku-4-5",
        "claude-haiku-4-5@20250101",
        "claude-haiku-4-5-20251001",
    ]);
    assert_eq!(
        served(&c, "claude-haiku-4-5-20250101").unwrap(),
        ["claude-haiku-4-5@20250101"],
        "the same version, spelled another way"
    );
    assert_eq!(
        served(&c, "claude-haiku-4-5-2024-06-01").unwrap(),
        ["claude-haiku-4-5-20251001"],
        "no such date: the newest"
    );
    let undated = catalog(&["claude-haiku-4-5"]);
    assert_eq!(
        served(&undated, "claude-haiku-4-5@20251001").unwrap(),
        ["claude-haiku-4-5"]
    );
}

#[test]
fn an_alias_or_a_rule_of_the_name_wins_over_a_loose_match() {
    let mut c = catalog(&["m-20251001", "other"]);
    add_alias(&mut c, "m", r#"{"pin":"other"}"#);
    assert!(matches!(lookup(&c, "m"), Some(Target::Alias(..))));
    assert_eq!(served(&c, "m").unwrap(), ["other"]);
    let mut r = catalog(&["m-20251001", "other"]);
    add_rule_json(&mut r, r#"{"match":"m","chain":["other"]}"#);
    assert_eq!(served(&r, "m").unwrap(), ["other"]);
}

#[test]
fn a_chain_entry_matches_loosely_too_and_is_no_dead_entry() {
    let mut c = catalog(&["m-20251001", "n"]);
    add_rule_json(&mut c, r#"{"match":"app","chain":["m","n"]}"#);
    assert_eq!(served(&c, "app").unwrap(), ["m-20251001", "n"]);
    let entries = c.rules.get("app").unwrap().entries().to_vec();
    assert!(dead_entries(&c, &entries, |_| true).is_empty());
}

#[test]
fn an_exact_name_costs_nothing_it_never_builds_the_version_index() {
    let mut c = catalog(&["m-20251001", "n"]);
    add_alias(&mut c, "cheap", r#"{"cost_tier":"cheapest"}"#);
    served(&c, "n").unwrap();
    served(&c, "cheap").unwrap();
    assert!(c.versions.get().is_none());
    served(&c, "m").unwrap();
    assert!(
        c.versions.get().is_some(),
        "a miss builds it, once per config"
    );
}

/// A tenant whose aliases see: `old` (2024, price 1), `new` (2025, price 9), `mid` (2025-03,
/// price 5) and two undated models `plain-a` (price 2) and `plain-b` (price 3).
fn dated_tenant(alias: &str) -> TenantConfig {
    let mut c = cfg();
    c.settings.exploration_share = 0.0;
    for (id, price) in [
        ("m-20240101", 1.0),
        ("m-20251001", 9.0),
        ("k@20250301", 5.0),
        ("plain-a", 2.0),
        ("plain-b", 3.0),
    ] {
        add_model(&mut c, id, "openai", price);
    }
    add_alias(&mut c, "x", alias);
    c
}

fn alias_order(c: &TenantConfig, observed: &Table) -> Vec<String> {
    let alias = &c.aliases["x"];
    let input = RouteInput {
        observed,
        ..RouteInput::unmeasured()
    };
    ranked_alias(c, alias, &input)
        .iter()
        .map(|m| m.id.to_string())
        .collect()
}

#[test]
fn prefer_newest_version_puts_dated_models_newest_first_ahead_of_the_price_order() {
    let plain = dated_tenant(r#"{"cost_tier":"cheapest"}"#);
    assert_eq!(served(&plain, "x").unwrap(), ["m-20240101"]);
    let newest = dated_tenant(r#"{"cost_tier":"cheapest","prefer_newest_version":true}"#);
    assert_eq!(served(&newest, "x").unwrap(), ["m-20251001"]);
    // A price alias with it stays resolved once per config: the cached resolution holds it.
    let name = AliasName::parse("x").unwrap();
    assert_eq!(
        resolve_aliases(&newest)[&name].as_ref().map(|m| m.as_str()),
        Some("m-20251001")
    );
}

#[test]
fn prefer_newest_version_orders_dated_models_first_and_undated_ones_follow_in_the_usual_order() {
    // Latency ranks plain-b first, then plain-a, then the dated ones by latency.
    let fast = |ms: f64| crate::routing::ModelHealth {
        latency_ms: Some(ms),
        requests: 1,
        ..Default::default()
    };
    let t = Table::of([
        ("plain-b", fast(10.0)),
        ("plain-a", fast(20.0)),
        ("m-20240101", fast(30.0)),
        ("k@20250301", fast(40.0)),
        ("m-20251001", fast(50.0)),
    ]);
    let usual = dated_tenant(r#"{"rank_by":"latency"}"#);
    assert_eq!(
        alias_order(&usual, &t),
        [
            "plain-b",
            "plain-a",
            "m-20240101",
            "k@20250301",
            "m-20251001"
        ]
    );
    let newest = dated_tenant(r#"{"rank_by":"latency","prefer_newest_version":true}"#);
    assert_eq!(
        alias_order(&newest, &t),
        [
            "m-20251001",
            "k@20250301",
            "m-20240101",
            "plain-b",
            "plain-a"
        ]
    );
    let input = RouteInput {
        observed: &t,
        ..RouteInput::unmeasured()
    };
    let name = AliasName::parse("x").unwrap();
    let top = alias_model(&newest, &name, &newest.aliases["x"], &input);
    assert_eq!(top.map(|m| m.id.as_str()), Some("m-20251001"));
}

#[test]
fn prefer_newest_version_keeps_the_pin_and_the_constraints_first() {
    let pinned = dated_tenant(r#"{"pin":"plain-a","prefer_newest_version":true}"#);
    assert_eq!(served(&pinned, "x").unwrap(), ["plain-a"]);
    let mut tools = dated_tenant(r#"{"capabilities":["tools"],"prefer_newest_version":true}"#);
    let json = br#"{"provider":"openai","context_window":8000,"capabilities":["chat","tools"]}"#;
    let body: crate::config::admin_body::ModelBody =
        crate::config::admin_body::parse_body(json).unwrap();
    let id = crate::config::ModelId::parse("m-20240101").unwrap();
    tools.models.insert(id.clone(), body.validate(id).unwrap());
    assert_eq!(
        served(&tools, "x").unwrap(),
        ["m-20240101"],
        "only it has tools"
    );
}
