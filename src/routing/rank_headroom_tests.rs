//! The headroom factor in the `score` rank and the `auto` strategies.

use super::tests::{model, NOW};
use super::*;
use crate::routing::auto::Strategy;

fn with(latency: f64, headroom: Option<f64>) -> Option<ModelHealth> {
    Some(ModelHealth {
        requests: 10,
        success_rate: Some(1.0),
        latency_ms: Some(latency),
        ttfb_ms: Some(latency),
        last_outcome_ms: Some(NOW - 1_000),
        headroom,
        ..ModelHealth::default()
    })
}

/// The ranked order with no exploration draw.
fn order(models: &[(CatalogModel, Option<ModelHealth>)], how: &Ranking) -> Vec<String> {
    super::tests::order(models, how, 0)
}

fn ranking(rank_by: RankBy, threshold: Option<f64>) -> Ranking {
    Ranking {
        rank_by,
        headroom_threshold: threshold,
        ..Ranking::default()
    }
}

#[test]
fn below_the_threshold_the_factor_is_half_plus_half_the_headroom_over_the_threshold() {
    let t = Some(0.1);
    assert_eq!(headroom_factor(with(1.0, Some(0.05)), t), 0.75);
    assert_eq!(headroom_factor(with(1.0, Some(0.0)), t), 0.5);
    assert_eq!(headroom_factor(with(1.0, Some(0.1)), t), 1.0, "at it, none");
    assert_eq!(headroom_factor(with(1.0, None), t), 1.0, "no figure, none");
    assert_eq!(headroom_factor(with(1.0, Some(0.05)), None), 1.0);
    assert_eq!(
        headroom_factor(with(1.0, Some(0.0)), Some(0.0)),
        1.0,
        "0 is off"
    );
    assert_eq!(headroom_factor(with(1.0, Some(0.2)), Some(0.4)), 0.75);
}

#[test]
fn the_score_rank_holds_back_a_faster_model_whose_best_key_is_nearly_out() {
    let set = [
        (model("a-fast-scarce", 1.0), with(80.0, Some(0.01))),
        (model("b-slower", 1.0), with(100.0, Some(0.9))),
    ];
    let score = |t| Ranking {
        weights: Weights {
            success: 0.0,
            latency: 1.0,
            ttfb: 0.0,
            price: 0.0,
        },
        ..ranking(RankBy::Score, t)
    };
    assert_eq!(order(&set, &score(None)), ["a-fast-scarce", "b-slower"]);
    assert_eq!(
        order(&set, &score(Some(0.1))),
        ["b-slower", "a-fast-scarce"]
    );
    let s = scores(
        &set.iter()
            .map(|(m, h)| Ranked {
                model: m,
                tier: 0,
                platform: 0,
                health: *h,
            })
            .collect::<Vec<_>>(),
        &score(Some(0.1)),
    );
    assert!(
        (s[0] - 0.55 * (101.0 / 81.0_f64).min(1.0)).abs() < 1e-9,
        "{s:?}"
    );
}

#[test]
fn an_auto_strategy_on_one_axis_applies_the_factor_and_orders_as_before_without_it() {
    let set = [
        (model("a-fast-scarce", 1.0), with(80.0, Some(0.01))),
        (model("b-slower", 1.0), with(100.0, None)),
        (model("c-slowest", 1.0), with(400.0, Some(0.5))),
    ];
    let plain = ["a-fast-scarce", "b-slower", "c-slowest"];
    assert_eq!(order(&set, &ranking(RankBy::Latency, None)), plain);
    let fast = Strategy::Fast.ranking(0.0, 0.1);
    assert_eq!(
        order(&set, &fast),
        ["b-slower", "a-fast-scarce", "c-slowest"]
    );
    let free = [
        (model("a", 1.0), with(80.0, Some(0.5))),
        (model("b", 1.0), with(100.0, None)),
    ];
    assert_eq!(
        order(&free, &fast),
        ["a", "b"],
        "no factor: the axis' order"
    );
}

#[test]
fn auto_smart_holds_back_the_priciest_model_when_its_quota_is_nearly_out() {
    let set = [
        (model("a-pricey", 10.0), with(100.0, Some(0.0))),
        (model("b-mid", 6.0), with(100.0, None)),
    ];
    assert_eq!(
        order(&set, &Strategy::Smart.ranking(0.0, 0.0)),
        ["a-pricey", "b-mid"]
    );
    assert_eq!(
        order(&set, &Strategy::Smart.ranking(0.0, 0.1)),
        ["b-mid", "a-pricey"]
    );
}
