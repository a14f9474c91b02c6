//! Prompt-cache affinity: the memory's bound and eviction, and what `build_chain` does with a
//! remembered model (spreads, plain entries, aliases, the window, an open breaker).

use super::*;
use crate::routing::test_config::{add_alias, add_model, Table};
use crate::routing::{build_chain, RouteInput};

fn key(prefix: u64) -> ConversationKey {
    ConversationKey {
        tenant: "t".into(),
        requested: "chat".into(),
        prefix,
    }
}

fn id(s: &str) -> ModelId {
    ModelId::parse(s).unwrap()
}

#[test]
fn the_memory_holds_at_most_its_capacity_and_evicts_the_least_recently_served() {
    let mut m = AffinityMemory::new(3);
    for p in 0..3 {
        m.served(key(p), id("a"), p);
    }
    // Serving 0 again makes 1 the least recently served.
    m.served(key(0), id("b"), 10);
    m.served(key(3), id("a"), 11);
    assert_eq!(m.len(), 3);
    assert!(m.remembered(&key(1)).is_none());
    assert_eq!(m.remembered(&key(0)), Some((&id("b"), 10)));
    assert!(m.remembered(&key(2)).is_some() && m.remembered(&key(3)).is_some());
}

#[test]
fn the_memory_is_keyed_by_tenant_name_and_prefix() {
    let mut m = AffinityMemory::new(CAPACITY);
    m.served(key(1), id("a"), 5);
    let other_name = ConversationKey {
        requested: "other".into(),
        ..key(1)
    };
    let other_tenant = ConversationKey {
        tenant: "u".into(),
        ..key(1)
    };
    assert!(m.remembered(&other_name).is_none());
    assert!(m.remembered(&other_tenant).is_none());
    assert!(m.remembered(&key(2)).is_none());
}

#[test]
fn one_tenant_with_more_conversations_than_the_memory_holds_cannot_evict_another_tenants() {
    let mut m = AffinityMemory::new(CAPACITY);
    let victim = ConversationKey {
        tenant: "victim".into(),
        ..key(0)
    };
    m.served(victim.clone(), id("a"), 1);
    for p in 0..2 * CAPACITY as u64 {
        m.served(key(p), id("b"), 2 + p);
    }
    assert_eq!(m.len(), CAPACITY, "bounded in all");
    assert_eq!(m.remembered(&victim), Some((&id("a"), 1)));
    assert!(m.remembered(&key(2 * CAPACITY as u64 - 1)).is_some());
}

fn spread_cfg(affinity: &str) -> crate::config::TenantConfig {
    crate::routing::test_config::spread_tenant(affinity)
}

fn route(
    c: &crate::config::TenantConfig,
    name: &str,
    observed: &Table,
    remembered: Option<(&ModelId, u64)>,
    draw: u64,
) -> (Vec<String>, Option<AffinityUse>) {
    let input = RouteInput {
        observed,
        now_ms: 100_000,
        draw,
        may_use: &|_| true,
        remembered,
        facts: None,
        pin: None,
    };
    let r = build_chain(c, name, &input).unwrap();
    let ids = r
        .candidates
        .iter()
        .map(|c| c.model.id.to_string())
        .collect();
    (ids, r.affinity)
}

#[test]
fn inside_a_spread_the_remembered_model_is_the_member_drawn() {
    let c = spread_cfg(r#","cache_affinity_s":60"#);
    let m2 = id("m2");
    for draw in [0, u64::MAX / 2, u64::MAX] {
        let (ids, hit) = route(&c, "chat", &Table::default(), Some((&m2, 50_000)), draw);
        assert_eq!(
            (ids, hit),
            (vec!["m2".into(), "m3".into()], Some(AffinityUse::Hit))
        );
    }
}

#[test]
fn a_name_without_cache_affinity_ignores_what_is_remembered_and_says_nothing() {
    let c = spread_cfg("");
    let m3 = id("m3");
    let (ids, hit) = route(&c, "chat", &Table::default(), Some((&m3, 99_000)), 0);
    assert_eq!(ids[1], "m3");
    assert_eq!(hit, None);
}

#[test]
fn affinity_ends_cache_affinity_s_after_the_last_serve() {
    let c = spread_cfg(r#","cache_affinity_s":60"#);
    let m3 = id("m3");
    let (ids, hit) = route(&c, "chat", &Table::default(), Some((&m3, 40_001)), 0);
    assert_eq!((ids[0].as_str(), hit), ("m3", Some(AffinityUse::Hit)));
    let (ids, hit) = route(&c, "chat", &Table::default(), Some((&m3, 40_000)), 0);
    assert_eq!((ids[1].as_str(), hit), ("m3", Some(AffinityUse::Miss)));
    let (_, hit) = route(&c, "chat", &Table::default(), None, 0);
    assert_eq!(hit, Some(AffinityUse::Miss));
}

#[test]
fn a_remembered_plain_entry_of_a_rule_moves_to_the_front() {
    let c = spread_cfg(r#","cache_affinity_s":60"#);
    let m3 = id("m3");
    let (ids, hit) = route(&c, "chat", &Table::default(), Some((&m3, 99_000)), 0);
    assert_eq!(ids.len(), 2);
    assert_eq!((ids[0].as_str(), hit), ("m3", Some(AffinityUse::Hit)));
}

#[test]
fn a_remembered_model_whose_breaker_is_open_is_a_miss() {
    let c = spread_cfg(r#","cache_affinity_s":60"#);
    let m2 = id("m2");
    let open = Table::open(&["m2"]);
    for draw in [0, u64::MAX] {
        let (ids, hit) = route(&c, "chat", &open, Some((&m2, 99_000)), draw);
        assert_eq!(ids, ["m1", "m3"]);
        assert_eq!(hit, Some(AffinityUse::Miss));
    }
}

#[test]
fn an_aliases_resolution_is_the_remembered_model_if_the_alias_admits_it_its_own_choice_next() {
    let mut c = spread_cfg("");
    add_model(&mut c, "tiny", "openai", 0.5);
    add_alias(
        &mut c,
        "cheap",
        r#"{"cost_tier":"cheapest","cache_affinity_s":30}"#,
    );
    add_alias(&mut c, "pinned", r#"{"pin":"m1","cache_affinity_s":30}"#);
    let m2 = id("m2");
    let (ids, hit) = route(&c, "cheap", &Table::default(), Some((&m2, 99_000)), 0);
    // The alias's own resolution stays behind it, as the fallback.
    assert_eq!(
        (ids, hit),
        (vec!["m2".into(), "tiny".into()], Some(AffinityUse::Hit))
    );
    let (ids, hit) = route(&c, "pinned", &Table::default(), Some((&m2, 99_000)), 0);
    assert_eq!((ids, hit), (vec!["m1".into()], Some(AffinityUse::Miss)));
    let (ids, hit) = route(&c, "cheap", &Table::default(), None, 0);
    assert_eq!((ids, hit), (vec!["tiny".into()], Some(AffinityUse::Miss)));
}
