//! Property tests of the version rules and the provider pin (the style of
//! `parsing_and_routing.rs`): loose version matching keeps the base and lets exact ids win, the
//! newest date wins, `prefer_newest_version` resolves to the newest dated model, and a pinned
//! chain holds only the pinned provider's models.

use cognigate::config::admin_body::{parse_body, ProviderBody};
use cognigate::config::{
    Alias, CatalogModel, Chain, ChainEntry, CostTier, Defaults, ModelId, ProviderName, RouteName,
    TenantConfig, TenantId,
};
use cognigate::routing::resolve::satisfies;
use cognigate::routing::versions::{closest, date, split, VersionDate};
use cognigate::routing::{build_chain, resolve_alias, RouteInput};
use proptest::prelude::*;

const PROVIDERS: [&str; 3] = ["p0", "p1", "p2"];
/// Bases that share prefixes, so a match that crossed versions would show.
const BASES: [&str; 4] = ["a", "a-1", "a-1-5", "b"];
/// Version suffixes: none, each spelling, a date spelled two ways, and a non-date.
const SUFFIXES: [&str; 7] = [
    "",
    "-20240101",
    "-2024-01-01",
    "@20250601",
    "-20251001",
    "@20251001",
    "-20251301",
];

fn id_of(base: usize, suffix: usize) -> String {
    format!("{}{}", BASES[base], SUFFIXES[suffix])
}

fn arb_id() -> impl Strategy<Value = String> {
    (0..BASES.len(), 0..SUFFIXES.len()).prop_map(|(b, s)| id_of(b, s))
}

/// A tenant with providers p0..p2 and these models `(id, provider, price)`, every one with chat.
fn tenant(models: &[(String, usize, u32)]) -> TenantConfig {
    let mut cfg = TenantConfig::empty(TenantId::parse("t").unwrap(), Defaults::default().settings);
    for p in PROVIDERS {
        let body: ProviderBody =
            parse_body(br#"{"kind":"openai","base_url":"http://x/v1","keys":["k"]}"#).unwrap();
        let name = ProviderName::parse(p).unwrap();
        cfg.providers.insert(
            name.clone(),
            body.validate(name).unwrap().resolve(|_| None).unwrap(),
        );
    }
    for (id, p, price) in models {
        let id = ModelId::parse(id).unwrap();
        cfg.models.insert(
            id.clone(),
            CatalogModel {
                id: id.clone(),
                provider: ProviderName::parse(PROVIDERS[*p]).unwrap(),
                upstream_model: id.to_string(),
                capabilities: vec![cognigate::config::Capability::parse("chat").unwrap()].into(),
                context_window: 8000,
                input_price_per_mtok: f64::from(*price),
                output_price_per_mtok: 0.0,
                cached_input_price_per_mtok: None,
                cache_write_price_per_mtok: None,
                cache_write_1h_price_per_mtok: None,
                max_output_tokens: None,
                fallback_model: None,
                min_cache_tokens: 1_024,
                quality_rank: None,
            },
        );
    }
    cfg
}

fn arb_models() -> impl Strategy<Value = Vec<(String, usize, u32)>> {
    proptest::collection::vec((arb_id(), 0..PROVIDERS.len(), 0u32..5), 0..12)
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn splitting_an_id_never_panics(id in ".{0,40}") {
        let (base, _) = split(&id);
        prop_assert!(id.starts_with(base));
    }

    #[test]
    fn every_real_date_reads_back_in_each_spelling(
        base in "[a-z][a-z0-9.-]{0,20}[a-z]", y in 2000u32..2100, m in 1u32..13, d in 1u32..29,
    ) {
        let day = VersionDate::new(y, m, d);
        prop_assert!(day.is_some());
        for id in [
            format!("{base}-{y:04}{m:02}{d:02}"),
            format!("{base}-{y:04}-{m:02}-{d:02}"),
            format!("{base}@{y:04}{m:02}{d:02}"),
        ] {
            prop_assert_eq!(split(&id), (base.as_str(), day));
        }
    }

    #[test]
    fn a_loose_match_keeps_the_base_exact_ids_win_and_the_newest_date_wins(
        models in arb_models(), requested in arb_id(),
    ) {
        let cfg = tenant(&models);
        let found = closest(&cfg, &requested, |_| true).map(|m| m.id.to_string());
        let (base, wanted) = split(&requested);
        let siblings: Vec<&str> = cfg.models.keys().map(|k| k.as_str())
            .filter(|k| split(k).0 == base).collect();
        if cfg.models.contains_key(requested.as_str()) {
            prop_assert_eq!(found.as_deref(), Some(requested.as_str()), "exact ids always win");
            return Ok(());
        }
        prop_assert_eq!(found.is_some(), !siblings.is_empty(), "only the date may differ");
        let Some(found) = found else { return Ok(()) };
        prop_assert_eq!(split(&found).0, base, "never another family or version");
        let same_day = wanted.is_some() && siblings.iter().any(|s| date(s) == wanted);
        if same_day {
            prop_assert_eq!(date(&found), wanted, "the same date spelled another way first");
        } else {
            let newest = siblings.iter().map(|s| date(s)).max().flatten();
            prop_assert_eq!(date(&found), newest, "the newest date wins");
        }
    }

    #[test]
    fn prefer_newest_version_resolves_to_a_newest_dated_model_that_satisfies(
        models in arb_models(), tier in 0usize..3,
    ) {
        let cfg = tenant(&models);
        let alias = Alias {
            prefer_newest_version: true,
            cost_tier: [CostTier::Cheapest, CostTier::Balanced, CostTier::Best][tier],
            ..Alias::default()
        };
        let newest = cfg.models.values().filter(|m| satisfies(m, &alias))
            .filter_map(|m| date(m.id.as_str())).max();
        let picked = resolve_alias(&cfg.models, &alias);
        prop_assert_eq!(picked.is_some(), !cfg.models.is_empty());
        if let Some(p) = picked {
            prop_assert_eq!(date(p.id.as_str()), newest);
        }
    }

    #[test]
    fn a_pinned_chain_holds_only_the_pinned_providers_models_and_keeps_those_it_had(
        models in arb_models(),
        chain in proptest::collection::vec(prop_oneof![arb_id(), Just("cheap".to_owned())], 1..5),
        pin in 0..PROVIDERS.len(),
    ) {
        let mut cfg = tenant(&models);
        cfg.aliases.insert(
            cognigate::config::AliasName::parse("cheap").unwrap(),
            Alias { cost_tier: CostTier::Cheapest, ..Alias::default() },
        );
        let entries = chain.iter().map(|e| ChainEntry::Name(RouteName::parse(e).unwrap())).collect();
        cfg.rules.insert(RouteName::parse("app").unwrap(), Chain::new(entries, 5).unwrap());
        let pin_name = ProviderName::parse(PROVIDERS[pin]).unwrap();
        let pin = cognigate::routing::pin::parse(&cfg, Some(PROVIDERS[pin]), None).unwrap().unwrap();
        let ids = |input: &RouteInput<'_>| build_chain(&cfg, "app", input)
            .map(|r| r.candidates.iter().map(|c| c.model.clone()).collect::<Vec<_>>());
        let pinned = ids(&RouteInput { pin: Some(&pin), ..RouteInput::unmeasured() });
        let unpinned = ids(&RouteInput::unmeasured()).unwrap_or_default();
        let kept: Vec<&CatalogModel> = unpinned.iter().filter(|m| m.provider == pin_name).collect();
        match pinned {
            Ok(models) => {
                prop_assert!(models.iter().all(|m| m.provider == pin_name));
                for m in kept {
                    prop_assert!(models.iter().any(|x| x.id == m.id), "{} was dropped", m.id);
                }
            }
            Err(_) => prop_assert!(kept.is_empty()),
        }
    }
}
