use super::*;
use crate::config::admin_body::{parse_body, ModelBody};
use crate::config::{Chain, Defaults, ModelId, RouteName};
use crate::routing::test_config::{tenant_with, Table};
use crate::routing::{build_chain, ModelHealth};

fn cfg(depth: u32) -> TenantConfig {
    let mut settings = Defaults::default().settings;
    settings.max_fallback_depth = depth;
    settings.exploration_share = 0.0;
    tenant_with(settings, &["p"])
}

fn add_model(cfg: &mut TenantConfig, id: &str, provider: &str, price: f64, caps: &str) {
    let json = format!(
        r#"{{"provider":"{provider}","context_window":8000,"input_price_per_mtok":{price},"capabilities":{caps}}}"#
    );
    let body: ModelBody = parse_body(json.as_bytes()).unwrap();
    let id = ModelId::parse(id).unwrap();
    cfg.models.insert(id.clone(), body.validate(id).unwrap());
}

/// m-cheap (price 1, 300 ms, 50% success), m-mid (price 2, 10 ms, 100%), m-dear (price 3,
/// 100 ms, 90%), an embeddings-only model and a model of a provider that does not exist.
fn catalog(depth: u32) -> TenantConfig {
    let mut c = cfg(depth);
    add_model(&mut c, "m-cheap", "p", 1.0, r#"["chat"]"#);
    add_model(&mut c, "m-mid", "p", 2.0, r#"["chat","tools"]"#);
    add_model(&mut c, "m-dear", "p", 3.0, r#"["chat"]"#);
    add_model(&mut c, "embed", "p", 0.1, r#"["embeddings"]"#);
    add_model(&mut c, "orphan", "gone", 0.0, r#"["chat"]"#);
    c
}

fn table() -> Table {
    let h = |latency: f64, success: f64| ModelHealth {
        requests: 10,
        success_rate: Some(success),
        latency_ms: Some(latency),
        last_outcome_ms: Some(1_000),
        ..ModelHealth::default()
    };
    Table::of([
        ("m-cheap", h(300.0, 0.5)),
        ("m-mid", h(10.0, 1.0)),
        ("m-dear", h(100.0, 0.9)),
    ])
}

fn chain_of(
    c: &TenantConfig,
    name: &str,
    may_use: &dyn Fn(&ModelId) -> bool,
) -> Result<Vec<String>, ChainError> {
    let t = table();
    let input = RouteInput {
        observed: &t,
        now_ms: 2_000,
        draw: 7,
        may_use,
        remembered: None,
        facts: None,
        pin: None,
    };
    build_chain(c, name, &input).map(|r| {
        r.candidates
            .iter()
            .map(|c| c.model.id.to_string())
            .collect()
    })
}

fn chain(c: &TenantConfig, name: &str) -> Vec<String> {
    chain_of(c, name, &|_| true).unwrap()
}

#[test]
fn auto_names_are_case_insensitive_and_accept_the_synonyms() {
    use Strategy::*;
    for (name, s) in [
        ("auto", Balanced),
        ("AUTO", Balanced),
        ("auto:balanced", Balanced),
        ("auto:fast", Fast),
        ("auto:Fastest", Fast),
        ("Auto:SPEED", Fast),
        ("auto:cheap", Cheap),
        ("AUTO:Cheapest", Cheap),
        ("auto:budget", Cheap),
        ("auto:smart", Smart),
        ("auto:smartest", Smart),
        ("auto:reliable", Reliable),
    ] {
        assert_eq!(parse(name), Some(AutoName::Strategy(s)), "{name}");
    }
    assert_eq!(parse("auto:my-Rule"), Some(AutoName::Rule("my-Rule")));
    assert_eq!(parse("automatic"), None);
    assert_eq!(parse("fast"), None);
}

#[test]
fn each_strategy_ranks_every_chat_model_with_an_existing_provider_by_its_axis() {
    let c = catalog(5);
    assert_eq!(chain(&c, "auto:cheap"), ["m-cheap", "m-mid", "m-dear"]);
    assert_eq!(chain(&c, "auto:smart"), ["m-dear", "m-mid", "m-cheap"]);
    assert_eq!(chain(&c, "auto:fast"), ["m-mid", "m-dear", "m-cheap"]);
    assert_eq!(chain(&c, "auto:reliable"), ["m-mid", "m-dear", "m-cheap"]);
    assert_eq!(chain(&c, "auto"), chain(&c, "auto:balanced"));
    assert_eq!(chain(&c, "auto")[0], "m-mid");
}

#[test]
fn the_chain_is_the_top_max_fallback_depth_models_so_the_runner_up_is_the_first_fallback() {
    let c = catalog(2);
    assert_eq!(chain(&c, "auto:fast"), ["m-mid", "m-dear"]);
}

#[test]
fn auto_rule_serves_that_rules_chain_and_an_unknown_auto_name_is_unknown_chain() {
    let mut c = catalog(5);
    c.rules.insert(
        RouteName::parse("my-app").unwrap(),
        Chain::new(
            vec![
                crate::config::ChainEntry::Name(RouteName::parse("m-dear").unwrap()),
                crate::config::ChainEntry::Name(RouteName::parse("m-cheap").unwrap()),
            ],
            5,
        )
        .unwrap(),
    );
    assert_eq!(chain(&c, "auto:my-app"), ["m-dear", "m-cheap"]);
    assert_eq!(chain(&c, "AUTO:my-app"), chain(&c, "my-app"));
    assert_eq!(
        chain_of(&c, "auto:nope", &|_| true).err(),
        Some(ChainError::UnknownChain("auto:nope".into()))
    );
    // A model id is no chain: only strategies and rules follow `auto:`.
    assert!(matches!(
        chain_of(&c, "auto:m-dear", &|_| true),
        Err(ChainError::UnknownChain(_))
    ));
}

#[test]
fn a_scoped_key_ranks_only_the_models_it_may_use_and_with_none_is_not_allowed() {
    let c = catalog(5);
    let only_dear = |m: &ModelId| m.as_str() == "m-dear" || m.as_str() == "m-cheap";
    assert_eq!(
        chain_of(&c, "auto:fast", &only_dear).unwrap(),
        ["m-dear", "m-cheap"]
    );
    assert_eq!(
        chain_of(&c, "auto", &|_| false).err(),
        Some(ChainError::NoneAllowed("auto".into()))
    );
    let empty = cfg(5);
    assert!(matches!(
        chain_of(&empty, "auto", &|_| true),
        Err(ChainError::NoCandidates { .. })
    ));
}

#[test]
fn models_lists_every_auto_name_for_an_unscoped_key_and_a_scoped_key_only_the_ones_it_lists() {
    let mut c = catalog(5);
    for r in ["app-a", "app-b", "app-c"] {
        c.rules.insert(
            RouteName::parse(r).unwrap(),
            Chain::new(
                vec![crate::config::ChainEntry::Name(
                    RouteName::parse("m-dear").unwrap(),
                )],
                5,
            )
            .unwrap(),
        );
    }
    assert_eq!(
        listed(&c, |_| true),
        [
            "auto",
            "auto:balanced",
            "auto:fast",
            "auto:cheap",
            "auto:smart",
            "auto:reliable",
            "auto:app-a",
            "auto:app-b",
            "auto:app-c"
        ]
    );
    // A scoped key's allow-list: a strategy by any of its names, a rule by its own name or as
    // `auto:<rule>`.
    let scoped = ["auto:balanced", "auto:fast", "app-a", "auto:app-c"];
    assert_eq!(
        listed(&c, |n| scoped.contains(&n)),
        [
            "auto",
            "auto:balanced",
            "auto:fast",
            "auto:app-a",
            "auto:app-c"
        ]
    );
    let allows = |n: &str| scoped.contains(&n);
    assert!(allowed_by(
        parse("AUTO:Fastest").unwrap(),
        "AUTO:Fastest",
        allows
    ));
    assert!(!allowed_by(
        parse("auto:cheap").unwrap(),
        "auto:cheap",
        allows
    ));
    assert!(!allowed_by(
        parse("auto:app-b").unwrap(),
        "auto:app-b",
        allows
    ));
}

#[test]
fn auto_and_auto_anything_are_reserved_in_any_case() {
    use crate::config::alias::is_reserved;
    for name in ["auto", "AUTO", "Auto:x", "auto:fast", "auto:"] {
        assert!(is_reserved(name), "{name}");
    }
    for name in ["autos", "my-auto", "auto-fast", "fast"] {
        assert!(!is_reserved(name), "{name}");
    }
}
