use super::*;
use crate::config::{Capability, ModelId, ProviderName};

pub(super) const NOW: u64 = 10_000_000;

pub(super) fn model(id: &str, price: f64) -> CatalogModel {
    CatalogModel {
        id: ModelId::parse(id).unwrap(),
        provider: ProviderName::parse("p").unwrap(),
        upstream_model: id.to_owned(),
        capabilities: vec![Capability::parse("chat").unwrap()].into(),
        context_window: 8000,
        input_price_per_mtok: price / 2.0,
        output_price_per_mtok: price / 2.0,
        cached_input_price_per_mtok: None,
        cache_write_price_per_mtok: None,
        cache_write_1h_price_per_mtok: None,
        max_output_tokens: None,
        fallback_model: None,
        min_cache_tokens: 1_024,
        quality_rank: None,
    }
}

fn seen(latency: f64, success: f64) -> Option<ModelHealth> {
    Some(ModelHealth {
        requests: 10,
        success_rate: Some(success),
        latency_ms: Some(latency),
        ttfb_ms: Some(latency / 2.0),
        last_outcome_ms: Some(NOW - 1_000),
        ..ModelHealth::default()
    })
}

fn by(rank_by: RankBy) -> Ranking {
    Ranking {
        rank_by,
        ..Ranking::default()
    }
}

pub(super) fn order(
    models: &[(CatalogModel, Option<ModelHealth>)],
    how: &Ranking,
    draw: u64,
) -> Vec<String> {
    let set = models
        .iter()
        .map(|(m, h)| Ranked {
            model: m,
            tier: 0,
            platform: 0,
            health: *h,
        })
        .collect();
    rank(set, how, NOW, draw)
        .into_iter()
        .map(|m| m.id.to_string())
        .collect()
}

#[test]
fn rank_by_price_is_seed_000_ascending_and_descending_for_best_with_ties_on_model_id() {
    let set = [
        (model("b-mid", 5.0), seen(10.0, 0.1)),
        (model("a-high", 9.0), None),
        (model("c-low", 1.0), seen(900.0, 1.0)),
        (model("a-mid", 5.0), None),
    ];
    assert_eq!(
        order(&set, &by(RankBy::Price), 0),
        ["c-low", "a-mid", "b-mid", "a-high"]
    );
    let best = Ranking {
        price_descending: true,
        ..by(RankBy::Price)
    };
    assert_eq!(order(&set, &best, 0), ["a-high", "a-mid", "b-mid", "c-low"]);
}

#[test]
fn latency_and_ttfb_rank_ascending_and_success_descending() {
    let set = [
        (model("slow", 1.0), seen(300.0, 1.0)),
        (model("quick", 2.0), seen(10.0, 0.5)),
        (model("mid", 3.0), seen(100.0, 0.9)),
    ];
    assert_eq!(
        order(&set, &by(RankBy::Latency), 0),
        ["quick", "mid", "slow"]
    );
    assert_eq!(order(&set, &by(RankBy::Ttfb), 0), ["quick", "mid", "slow"]);
    assert_eq!(
        order(&set, &by(RankBy::Success), 0),
        ["slow", "mid", "quick"]
    );
}

#[test]
fn a_model_with_no_value_on_the_axis_ranks_as_if_it_had_the_best_and_before_the_model_holding_it_so_it_gets_tried(
) {
    let set = [
        (model("measured-fast", 1.0), seen(10.0, 1.0)),
        (model("untried", 1.0), None),
        (model("measured-slow", 1.0), seen(300.0, 1.0)),
    ];
    // Equal to the best value, and ahead of the model holding it: a tie broken on model id
    // alone could leave "untried" behind "measured-fast" for ever.
    assert_eq!(
        order(&set, &by(RankBy::Latency), 0),
        ["untried", "measured-fast", "measured-slow"]
    );
    let set = [
        (model("b-flaky", 1.0), seen(10.0, 0.4)),
        (model("a-untried", 1.0), None),
    ];
    assert_eq!(
        order(&set, &by(RankBy::Success), 0),
        ["a-untried", "b-flaky"]
    );
}

#[test]
fn score_blends_normalised_axes_with_the_default_weights() {
    // fast-flaky: success 0.5/1.0 = 0.5, latency 1, price (1.01/2.01) = 0.502:
    //   0.5*0.5 + 0.25*1 + 0.25*0.502 = 0.626
    // slow-solid: success 1, latency 11/301 = 0.037, price 1: 0.5 + 0.009 + 0.25 = 0.759
    let set = [
        (model("fast-flaky", 2.0), seen(10.0, 0.5)),
        (model("slow-solid", 1.0), seen(300.0, 1.0)),
    ];
    assert_eq!(
        order(&set, &by(RankBy::Score), 0),
        ["slow-solid", "fast-flaky"]
    );
    // Latency alone decides the other way.
    let latency_only = Ranking {
        weights: Weights {
            success: 0.0,
            latency: 1.0,
            ttfb: 0.0,
            price: 0.0,
        },
        ..by(RankBy::Score)
    };
    assert_eq!(order(&set, &latency_only, 0), ["fast-flaky", "slow-solid"]);
}

#[test]
fn most_keys_parked_or_a_provider_near_its_rpm_holds_a_model_back_in_the_score() {
    let held = |parked_share, rpm_share| {
        seen(10.0, 1.0).map(|h| ModelHealth {
            parked_share,
            rpm_share,
            ..h
        })
    };
    assert_eq!(
        penalty(held(0.5, 0.79)),
        1.0,
        "at the thresholds, no penalty"
    );
    assert_eq!(penalty(held(0.75, 0.0)), PARKED_FACTOR);
    assert_eq!(penalty(held(0.0, 0.8)), RPM_FACTOR);
    assert_eq!(penalty(held(1.0, 1.0)), PARKED_FACTOR * RPM_FACTOR);
    let set = [
        (model("a-parked", 1.0), held(0.75, 0.0)),
        (model("b-free", 1.0), seen(12.0, 0.95)),
    ];
    assert_eq!(order(&set, &by(RankBy::Score), 0), ["b-free", "a-parked"]);
    // The multipliers belong to the score only: latency alone ignores them.
    assert_eq!(order(&set, &by(RankBy::Latency), 0), ["a-parked", "b-free"]);
}

#[test]
fn an_open_breaker_sorts_after_every_closed_one_and_preference_tiers_order_before_the_axis() {
    let open = seen(1.0, 1.0).map(|h| ModelHealth {
        breaker_open: true,
        ..h
    });
    let (a, b, c) = (model("a", 1.0), model("b", 1.0), model("c", 1.0));
    let set = vec![
        Ranked {
            model: &a,
            tier: 0,
            platform: 0,
            health: open,
        },
        Ranked {
            model: &b,
            tier: 1,
            platform: 0,
            health: seen(5.0, 1.0),
        },
        Ranked {
            model: &c,
            tier: 0,
            platform: 0,
            health: seen(500.0, 1.0),
        },
    ];
    let ids: Vec<&str> = rank(set, &by(RankBy::Latency), NOW, 0)
        .into_iter()
        .map(|m| m.id.as_str())
        .collect();
    assert_eq!(ids, ["c", "b", "a"]);
}

fn stale(latency: f64) -> Option<ModelHealth> {
    seen(latency, 1.0).map(|h| ModelHealth {
        last_outcome_ms: Some(NOW - STALE_MS),
        ..h
    })
}

#[test]
fn a_stated_share_of_draws_puts_a_stale_candidate_first_chosen_from_the_draw() {
    let set = [
        (model("fresh-fast", 1.0), seen(10.0, 1.0)),
        (model("stale-a", 1.0), stale(500.0)),
        (model("stale-b", 1.0), stale(400.0)),
        (model("recent-slow", 1.0), seen(600.0, 1.0)),
    ];
    let how = Ranking {
        exploration_share: 0.02,
        ..by(RankBy::Latency)
    };
    // A draw whose top bits fall in the first 2% explores; one above does not.
    let exploring = 1u64 << 55; // fraction 1/512
    let not_exploring = u64::MAX / 2;
    assert!(explores(exploring, 0.02) && !explores(not_exploring, 0.02));
    assert_eq!(
        order(&set, &how, not_exploring),
        ["fresh-fast", "stale-b", "stale-a", "recent-slow"]
    );
    let first = order(&set, &how, exploring);
    assert!(first[0].starts_with("stale-"), "{first:?}");
    // Deterministic for a given snapshot and draw.
    assert_eq!(order(&set, &how, exploring), first);
    // Every stale model is reachable by some draw of the exploring share.
    let picked: crate::config::SortedSet<String> = (0..64u64)
        .map(|i| order(&set, &how, i)[0].clone())
        .collect();
    assert_eq!(
        picked.into_iter().collect::<Vec<_>>(),
        ["stale-a", "stale-b"]
    );
}

#[test]
fn exploration_is_off_at_share_0_and_never_applies_to_price_ranking() {
    let set = [
        (model("fresh", 1.0), seen(10.0, 1.0)),
        (model("stale", 2.0), stale(500.0)),
    ];
    let off = Ranking {
        exploration_share: 0.0,
        ..by(RankBy::Latency)
    };
    assert!((0..64u64).all(|d| order(&set, &off, d)[0] == "fresh"));
    let price = Ranking {
        exploration_share: 1.0,
        ..by(RankBy::Price)
    };
    assert!((0..64u64).all(|d| order(&set, &price, d)[0] == "fresh"));
    let always = Ranking {
        exploration_share: 1.0,
        ..by(RankBy::Latency)
    };
    assert!((0..64u64).all(|d| order(&set, &always, d)[0] == "stale"));
}

#[test]
fn with_an_injected_clock_stats_become_stale_after_sixty_seconds() {
    let (m, h) = (model("m", 1.0), seen(10.0, 1.0));
    let r = Ranked {
        model: &m,
        tier: 0,
        platform: 0,
        health: h,
    };
    assert!(!r.is_stale(NOW - 1_000 + STALE_MS - 1));
    assert!(r.is_stale(NOW - 1_000 + STALE_MS));
}

/// A tenant with provider `p`, models a (price 1), b (price 2, tools), c (price 3, tools) and
/// these aliases; exploration off.
fn tenant(aliases: &[(&str, &str)]) -> crate::config::TenantConfig {
    use crate::config::admin_body::{parse_body, AliasBody};
    use crate::config::{AliasName, Defaults};
    let mut settings = Defaults::default().settings;
    settings.exploration_share = 0.0;
    let mut cfg = crate::routing::test_config::tenant_with(settings, &["p"]);
    for (id, price, tools) in [("a", 1.0, false), ("b", 2.0, true), ("c", 3.0, true)] {
        let mut m = model(id, price);
        if tools {
            m.capabilities = vec![
                Capability::parse("chat").unwrap(),
                Capability::parse("tools").unwrap(),
            ]
            .into();
        }
        cfg.models.insert(m.id.clone(), m);
    }
    for (name, json) in aliases {
        let a = parse_body::<AliasBody>(json.as_bytes())
            .unwrap()
            .validate()
            .unwrap();
        cfg.aliases.insert(AliasName::parse(name).unwrap(), a);
    }
    cfg
}

use crate::routing::test_config::Table;

fn chain(cfg: &crate::config::TenantConfig, name: &str, t: &Table) -> Vec<String> {
    let input = crate::routing::RouteInput {
        observed: t,
        now_ms: NOW,
        draw: 0,
        may_use: &|_| true,
        remembered: None,
        facts: None,
        pin: None,
    };
    crate::routing::build_chain(cfg, name, &input)
        .unwrap()
        .candidates
        .iter()
        .map(|c| c.model.id.to_string())
        .collect()
}

#[test]
fn a_ranked_alias_keeps_seed_000s_pin_filter_and_preference_before_its_axis_and_gives_one_candidate(
) {
    let t = Table::of([
        ("a", seen(5.0, 1.0).unwrap()),
        ("b", seen(300.0, 1.0).unwrap()),
        ("c", seen(20.0, 1.0).unwrap()),
    ]);
    let cfg = tenant(&[
        ("quick", r#"{"capabilities":["chat"],"rank_by":"latency"}"#),
        (
            "quick-tools",
            r#"{"capabilities":["tools"],"rank_by":"latency"}"#,
        ),
        ("pinned", r#"{"pin":"b","rank_by":"latency"}"#),
        (
            "cheap",
            r#"{"capabilities":["chat"],"cost_tier":"cheapest"}"#,
        ),
    ]);
    // One candidate per position: the top-ranked model, not every match.
    assert_eq!(chain(&cfg, "quick", &t), ["a"]);
    assert_eq!(
        chain(&cfg, "quick-tools", &t),
        ["c"],
        "filtered to tools first"
    );
    assert_eq!(
        chain(&cfg, "pinned", &t),
        ["b"],
        "a pin that exists wins outright"
    );
    // The price alias ignores what was measured.
    let slow_a = Table::of([("a", seen(9_000.0, 0.1).unwrap())]);
    assert_eq!(chain(&cfg, "cheap", &slow_a), ["a"]);
    assert_eq!(
        chain(&cfg, "quick", &slow_a),
        ["b"],
        "unmeasured b and c rank first"
    );
}
