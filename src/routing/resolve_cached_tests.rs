//! Host tests of the cost order with cached tokens: a cheapest or balanced price alias orders
//! by effective price at the shares measured when its config was resolved.

use super::*;
use crate::routing::rank::{rank, Ranked, Ranking};
use crate::routing::test_config::{add_alias, add_model_json, cached, cfg, Table};
use crate::routing::ModelHealth;

/// `list` (list price 2, no cached price) and `cacheable` (list price 3.5, cached input 0.3).
fn tenant(tier: &str) -> TenantConfig {
    let mut c = cfg();
    let list = r#""input_price_per_mtok":1,"output_price_per_mtok":1"#;
    add_model_json(&mut c, "list", "openai", list);
    let cacheable =
        r#""input_price_per_mtok":3,"output_price_per_mtok":0.5,"cached_input_price_per_mtok":0.3"#;
    add_model_json(&mut c, "cacheable", "together", cacheable);
    add_alias(
        &mut c,
        "fast",
        &format!(r#"{{"capabilities":["chat"],"cost_tier":"{tier}"}}"#),
    );
    c
}

fn resolved_with(c: &TenantConfig, observed: &dyn Observed) -> String {
    let r = resolve_aliases_with(c, observed);
    let name = AliasName::parse("fast").unwrap();
    r.aliases[&name].as_ref().unwrap().to_string()
}

/// `fast` resolved with `model` measured at a cached share of `share`.
fn resolved_at(c: &TenantConfig, model: &str, share: f64) -> String {
    resolved_with(c, &Table::of([(model, cached(share))]))
}

#[test]
fn a_price_alias_orders_by_effective_price_once_a_cached_share_is_measured() {
    // 3 × (1 − 0.8) + 0.3 × 0.8 + 0.5 = 1.34 < 2.
    let c = tenant("cheapest");
    assert_eq!(resolved_at(&c, "cacheable", 0.8), "cacheable");
    let shares = &c.resolved.get().unwrap().cached_shares;
    assert_eq!(shares.get("cacheable"), Some(&0.8));
    // 3 × 0.8 + 0.3 × 0.2 + 0.5 = 2.96 > 2.
    let c = tenant("balanced");
    assert_eq!(resolved_at(&c, "cacheable", 0.2), "list");
}

#[test]
fn the_share_is_0_until_measured_or_without_a_cached_price_so_the_seed_order_is_unchanged() {
    let c = tenant("cheapest");
    assert_eq!(resolved_with(&c, &NothingObserved), "list");
    assert!(c.resolved.get().unwrap().cached_shares.is_empty());
    let c = tenant("cheapest");
    let served_no_usage = ModelHealth {
        requests: 5,
        ..ModelHealth::default()
    };
    assert_eq!(
        resolved_with(&c, &Table::of([("cacheable", served_no_usage)])),
        "list"
    );
    // A share measured on a model without a cached price moves nothing, and is not kept.
    let c = tenant("cheapest");
    assert_eq!(resolved_at(&c, "list", 1.0), "list");
    assert!(c.resolved.get().unwrap().cached_shares.is_empty());
    // Resolved on first use, without the config's load: nothing measured.
    let c = tenant("cheapest");
    assert_eq!(
        alias_target(&c, &AliasName::parse("fast").unwrap())
            .unwrap()
            .id
            .as_str(),
        "list"
    );
}

#[test]
fn best_orders_by_list_price_since_a_cache_read_changes_the_cost_not_the_quality() {
    let c = tenant("best");
    assert_eq!(resolved_at(&c, "cacheable", 1.0), "cacheable");
    let mut c = tenant("best");
    add_model_json(
        &mut c,
        "dear",
        "openai",
        r#""input_price_per_mtok":3,"output_price_per_mtok":0.6"#,
    );
    assert_eq!(resolved_at(&c, "cacheable", 0.0), "dear");
}

#[test]
fn a_pinned_request_and_the_refusal_runner_up_read_the_shares_the_config_was_resolved_at() {
    let mut c = tenant("cheapest");
    let o_cached =
        r#""input_price_per_mtok":3,"output_price_per_mtok":0.5,"cached_input_price_per_mtok":0.3"#;
    add_model_json(&mut c, "o-cached", "openai", o_cached);
    // cacheable 1.07, o-cached 1.34, list 2.
    let shares = Table::of([("cacheable", cached(0.9)), ("o-cached", cached(0.8))]);
    assert_eq!(resolved_with(&c, &shares), "cacheable");
    let fast = AliasName::parse("fast").unwrap();
    let alias = &c.aliases[&fast];
    let pin = crate::routing::pin::parse(&c, Some("openai"), None)
        .unwrap()
        .unwrap();
    let input = RouteInput {
        pin: Some(&pin),
        ..RouteInput::unmeasured()
    };
    let m = alias_model(&c, &fast, alias, &input).unwrap();
    assert_eq!(
        m.id.as_str(),
        "o-cached",
        "the pinned provider's cheapest, as measured"
    );
    let top = ModelId::parse("cacheable").unwrap();
    let runner_up = alias_runner_up(&c, alias, &RouteInput::unmeasured(), &top).unwrap();
    assert_eq!(runner_up.id.as_str(), "o-cached");
}

#[test]
fn a_ranking_by_price_reads_each_models_measured_cached_share() {
    let c = tenant("cheapest");
    let ranked = |share: Option<f64>| {
        let set: Vec<Ranked<'_>> = c
            .models
            .values()
            .map(|m| Ranked {
                model: m,
                tier: 0,
                platform: 0,
                health: share.filter(|_| m.id.as_str() == "cacheable").map(cached),
            })
            .collect();
        let order = rank(set, &Ranking::default(), 0, 0);
        order.iter().map(|m| m.id.as_str()).collect::<Vec<_>>()
    };
    assert_eq!(ranked(None), ["list", "cacheable"]);
    assert_eq!(ranked(Some(0.8)), ["cacheable", "list"]);
}
