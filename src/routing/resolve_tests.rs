use super::*;
use crate::config::{Capability, ProviderName};

fn model(id: &str, provider: &str, price: f64, ctx: u32, caps: &[&str]) -> CatalogModel {
    let capabilities: Vec<Capability> =
        caps.iter().map(|c| Capability::parse(c).unwrap()).collect();
    CatalogModel {
        id: ModelId::parse(id).unwrap(),
        provider: ProviderName::parse(provider).unwrap(),
        upstream_model: id.to_owned(),
        capabilities: capabilities.into(),
        context_window: ctx,
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

fn catalog(models: Vec<CatalogModel>) -> SortedMap<ModelId, CatalogModel> {
    models.into_iter().map(|m| (m.id.clone(), m)).collect()
}

fn alias(tier: CostTier) -> Alias {
    Alias {
        capabilities: vec![Capability::parse("chat").unwrap()].into(),
        cost_tier: tier,
        ..Alias::default()
    }
}

fn resolved(cat: &SortedMap<ModelId, CatalogModel>, a: &Alias) -> Option<String> {
    resolve_alias(cat, a).map(|m| m.id.to_string())
}

#[test]
fn pin_that_exists_wins_outright_even_over_cheaper_models() {
    let cat = catalog(vec![
        model("cheap", "p", 1.0, 8000, &["chat"]),
        model("pricey", "p", 9.0, 8000, &["chat"]),
    ]);
    let a = Alias {
        pin: Some(ModelId::parse("pricey").unwrap()),
        ..alias(CostTier::Cheapest)
    };
    assert_eq!(resolved(&cat, &a).as_deref(), Some("pricey"));
}

#[test]
fn pin_that_no_longer_exists_falls_through_to_constraints() {
    let cat = catalog(vec![model("cheap", "p", 1.0, 8000, &["chat"])]);
    let a = Alias {
        pin: Some(ModelId::parse("retired-model").unwrap()),
        ..alias(CostTier::Cheapest)
    };
    assert_eq!(resolved(&cat, &a).as_deref(), Some("cheap"));
}

#[test]
fn filter_requires_every_capability_and_the_min_context_window() {
    let cat = catalog(vec![
        model("no-tools", "p", 1.0, 200_000, &["chat"]),
        model("short", "p", 2.0, 8_000, &["chat", "tools"]),
        model("fits", "p", 3.0, 128_000, &["chat", "tools"]),
    ]);
    let a = Alias {
        capabilities: vec![
            Capability::parse("chat").unwrap(),
            Capability::parse("tools").unwrap(),
        ]
        .into(),
        min_context_window: Some(128_000),
        ..alias(CostTier::Cheapest)
    };
    assert_eq!(resolved(&cat, &a).as_deref(), Some("fits"));
}

#[test]
fn nothing_satisfies_resolves_to_none() {
    let cat = catalog(vec![model("small", "p", 1.0, 8_000, &["chat"])]);
    let a = Alias {
        min_context_window: Some(128_000),
        ..alias(CostTier::Balanced)
    };
    assert_eq!(resolved(&cat, &a), None);
}

#[test]
fn provider_preference_orders_before_price() {
    let cat = catalog(vec![
        model("openai-cheap", "openai", 1.0, 8000, &["chat"]),
        model("together-pricey", "together", 5.0, 8000, &["chat"]),
    ]);
    let a = Alias {
        provider_preference: vec![
            ProviderName::parse("together").unwrap(),
            ProviderName::parse("openai").unwrap(),
        ],
        ..alias(CostTier::Cheapest)
    };
    assert_eq!(resolved(&cat, &a).as_deref(), Some("together-pricey"));
}

#[test]
fn unnamed_provider_sorts_after_named_ones_but_stays_eligible() {
    let cat = catalog(vec![
        model("unnamed-cheapest", "local", 0.0, 8000, &["chat"]),
        model("named", "openai", 5.0, 8000, &["chat"]),
    ]);
    let prefer_openai = Alias {
        provider_preference: vec![ProviderName::parse("openai").unwrap()],
        ..alias(CostTier::Cheapest)
    };
    assert_eq!(resolved(&cat, &prefer_openai).as_deref(), Some("named"));
    // Not an allowlist: when the named provider has nothing, the unnamed one still serves.
    let only_unnamed = catalog(vec![model(
        "unnamed-cheapest",
        "local",
        0.0,
        8000,
        &["chat"],
    )]);
    assert_eq!(
        resolved(&only_unnamed, &prefer_openai).as_deref(),
        Some("unnamed-cheapest")
    );
}

#[test]
fn cheapest_and_balanced_sort_price_ascending() {
    let cat = catalog(vec![
        model("b-mid", "p", 5.0, 8000, &["chat"]),
        model("a-high", "p", 9.0, 8000, &["chat"]),
        model("c-low", "p", 1.0, 8000, &["chat"]),
    ]);
    assert_eq!(
        resolved(&cat, &alias(CostTier::Cheapest)).as_deref(),
        Some("c-low")
    );
    assert_eq!(
        resolved(&cat, &alias(CostTier::Balanced)).as_deref(),
        Some("c-low")
    );
}

#[test]
fn best_sorts_price_descending() {
    let cat = catalog(vec![
        model("b-mid", "p", 5.0, 8000, &["chat"]),
        model("a-high", "p", 9.0, 8000, &["chat"]),
        model("c-low", "p", 1.0, 8000, &["chat"]),
    ]);
    assert_eq!(
        resolved(&cat, &alias(CostTier::Best)).as_deref(),
        Some("a-high")
    );
}

#[test]
fn price_is_input_plus_output() {
    let mut skewed = model("skewed", "p", 0.0, 8000, &["chat"]);
    skewed.input_price_per_mtok = 0.1;
    skewed.output_price_per_mtok = 10.0;
    let mut even = model("even", "p", 0.0, 8000, &["chat"]);
    even.input_price_per_mtok = 3.0;
    even.output_price_per_mtok = 3.0;
    let cat = catalog(vec![skewed, even]);
    assert_eq!(
        resolved(&cat, &alias(CostTier::Cheapest)).as_deref(),
        Some("even")
    );
}

#[test]
fn ties_break_on_model_id_so_the_same_request_resolves_the_same_way() {
    for order in [["zeta", "alpha", "mid"], ["mid", "zeta", "alpha"]] {
        let cat = catalog(
            order
                .iter()
                .map(|id| model(id, "p", 2.0, 8000, &["chat"]))
                .collect(),
        );
        assert_eq!(
            resolved(&cat, &alias(CostTier::Best)).as_deref(),
            Some("alpha")
        );
        assert_eq!(
            resolved(&cat, &alias(CostTier::Cheapest)).as_deref(),
            Some("alpha")
        );
    }
}

#[test]
fn only_names_the_tenant_wrote_are_configured_names_for_the_metrics() {
    use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg};
    let mut c = cfg();
    add_model(&mut c, "gpt-4o-2024-08-06", "openai", 1.0);
    add_alias(&mut c, "fast", r#"{"capabilities":["chat"]}"#);
    add_rule_json(&mut c, r#"{"name":"r1","match":"chain","chain":["fast"]}"#);
    for name in [
        "gpt-4o-2024-08-06",
        "fast",
        "chain",
        "auto",
        "auto:cheap",
        "auto:r1",
    ] {
        assert!(configured_name(&c, name), "{name}");
    }
    // Each of these routes (or is refused) by rule, but names nothing written: callers can
    // make up any number of them.
    for name in [
        "gpt-4o",
        "AUTO:cheap",
        "auto:r2",
        "no-such",
        "fast\u{1f}x",
        "",
    ] {
        assert!(!configured_name(&c, name), "{name}");
    }
}
