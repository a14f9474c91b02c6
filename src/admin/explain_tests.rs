//! Host tests of `explain`'s dry run over a config and routing-object snapshots.

use super::*;
use crate::config::admin_body::{parse_body, ProviderBody};
use crate::config::{Defaults, ModelId};
use crate::health::{ProviderState, ReportRequest, Verdict};
use crate::routing::stats::stats_book::{ModelSnapshot, StatsSnapshot};
use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg};

const NOW: u64 = 1_000_000;

fn run(
    cfg: &TenantConfig,
    query: &str,
    snapshots: &SortedMap<String, RoutingSnapshot>,
) -> Explanation {
    let q = ExplainQuery::parse(Some(query)).unwrap();
    let dry = DryRun {
        snapshots,
        now_ms: NOW,
        draw: 0,
        request_budget_ms: 60_000,
    };
    explain(cfg, &q, &dry).unwrap()
}

/// `openai`'s state after five counted failures of `model` just before `NOW`.
fn tripped(model: &str) -> RoutingSnapshot {
    let mut st = ProviderState::default();
    for i in 0..5 {
        let report = ReportRequest {
            model: ModelId::parse(model).unwrap(),
            parks: Vec::new(),
            verdict: Verdict::Failure {
                reason: "server".into(),
            },
            probe: None,
            breaker: Defaults::default().settings.breaker,
            scheduled: None,
        };
        st.report(&report, NOW - 10 + i);
    }
    RoutingSnapshot::of(&st, None)
}

fn rows(e: &Explanation) -> Vec<(usize, &str, &'static str, Option<&'static str>)> {
    e.candidates
        .iter()
        .map(|c| {
            let reason = c.reason.map(|r| r.as_str());
            (c.position, c.model.as_str(), c.decision.as_str(), reason)
        })
        .collect()
}

#[test]
fn an_open_breakers_position_is_skipped_with_its_breaker_until_and_the_next_is_tried() {
    let mut c = cfg();
    add_model(&mut c, "a", "openai", 1.0);
    add_model(&mut c, "b", "together", 1.0);
    add_rule_json(&mut c, r#"{"match":"best","chain":["gone","a","b"]}"#);
    let snaps = SortedMap::from([("openai".to_owned(), tripped("a"))]);
    let e = run(&c, "model=best", &snaps);
    assert_eq!(
        rows(&e),
        [
            (1, "a", "skip", Some("breaker_open")),
            (2, "b", "try", None)
        ],
        "positions count the dead entry"
    );
    let until = NOW - 6 + Defaults::default().settings.breaker.open_duration_ms;
    assert_eq!(
        (e.candidates[0].until, e.candidates[0].breaker_until),
        (Some(until), Some(until))
    );
    assert_eq!(
        (e.candidates[1].until, e.candidates[1].breaker_until),
        (None, None)
    );
    assert_eq!(
        (e.candidates[1].score, &e.candidates[1].stats),
        (None, &None)
    );
}

#[test]
fn a_family_that_cannot_serve_the_endpoint_is_skipped_for_capability() {
    let mut c = cfg();
    let body: ProviderBody =
        parse_body(br#"{"kind":"anthropic","base_url":"http://x/v1","keys":["k"]}"#).unwrap();
    let ant = ProviderName::parse("ant").unwrap();
    c.providers.insert(
        ant.clone(),
        body.validate(ant).unwrap().resolve(|_| None).unwrap(),
    );
    add_model(&mut c, "claude", "ant", 1.0);
    add_model(&mut c, "a", "openai", 1.0);
    add_rule_json(&mut c, r#"{"match":"vec","chain":["claude","a"]}"#);
    let none = SortedMap::new();
    let e = run(&c, "model=vec&endpoint=embeddings", &none);
    assert_eq!(
        rows(&e),
        [
            (0, "claude", "skip", Some("capability")),
            (1, "a", "try", None)
        ]
    );
    assert_eq!(rows(&run(&c, "model=vec", &none))[0].2, "try");
}

#[test]
fn a_conditional_rule_is_explained_by_the_facts_in_the_query() {
    let mut c = cfg();
    for m in ["plain", "tooled", "streamed"] {
        add_model(&mut c, m, "openai", 1.0);
    }
    add_rule_json(
        &mut c,
        r#"{"name":"a","match":"best","when":{"params.tools":true},"chain":["tooled"]}"#,
    );
    add_rule_json(
        &mut c,
        r#"{"name":"b","match":"best","when":{"metadata.team":"live"},"chain":["streamed"]}"#,
    );
    add_rule_json(&mut c, r#"{"name":"c","match":"best","chain":["plain"]}"#);
    let none = SortedMap::new();
    let first = |q: &str| run(&c, q, &none).candidates[0].model.clone();
    assert_eq!(first("model=best"), "plain");
    assert_eq!(first("model=best&tools=true"), "tooled");
    assert_eq!(
        first("model=best&metadata=%7B%22team%22%3A%22live%22%7D"),
        "streamed"
    );
}

#[test]
fn an_unknown_name_is_model_not_found_as_on_the_request_path() {
    let q = ExplainQuery::parse(Some("model=nope")).unwrap();
    let none = SortedMap::new();
    let dry = DryRun {
        snapshots: &none,
        now_ms: NOW,
        draw: 0,
        request_budget_ms: 60_000,
    };
    let err = explain(&cfg(), &q, &dry).unwrap_err().api_error();
    assert_eq!((err.status(), err.code()), (404, Some("model_not_found")));
}

#[test]
fn a_ranked_alias_shows_the_score_and_the_live_stats_behind_it() {
    let mut c = cfg();
    add_model(&mut c, "fast", "openai", 1.0);
    add_model(&mut c, "slow", "together", 1.0);
    add_alias(
        &mut c,
        "quick",
        r#"{"capabilities":["chat"],"rank_by":"latency"}"#,
    );
    add_rule_json(&mut c, r#"{"match":"r","chain":["quick","slow"]}"#);
    let measured = |latency: f64| crate::routing::stats::model_stats::ModelStats {
        latency_ms: Some(latency),
        requests: 4,
        ..Default::default()
    };
    let snap = |model: &str, latency: f64| RoutingSnapshot {
        stats: Some(StatsSnapshot {
            models: SortedMap::from([(
                model.to_owned(),
                ModelSnapshot {
                    stats: Some(measured(latency)),
                    breaker: None,
                },
            )]),
            ..StatsSnapshot::default()
        }),
        ..RoutingSnapshot::default()
    };
    let snaps = SortedMap::from([
        ("openai".to_owned(), snap("fast", 100.0)),
        ("together".to_owned(), snap("slow", 400.0)),
    ]);
    let e = run(&c, "model=r", &snaps);
    assert_eq!(
        rows(&e),
        [(0, "fast", "try", None), (1, "slow", "try", None)]
    );
    assert_eq!(
        e.candidates[0].score,
        Some(1.0),
        "the best latency of its set"
    );
    let stats = e.candidates[0].stats.as_ref().unwrap();
    assert_eq!((stats.requests, stats.latency_ms), (4, Some(100.0)));
    assert_eq!(e.candidates[1].score, None, "a plain model is not ranked");
}

#[test]
fn an_auto_strategys_positions_are_its_ranks_each_scored() {
    let mut c = cfg();
    add_model(&mut c, "cheap", "openai", 1.0);
    add_model(&mut c, "dear", "together", 9.0);
    let none = SortedMap::new();
    let e = run(&c, "model=auto:cheap", &none);
    assert_eq!(
        rows(&e),
        [(0, "cheap", "try", None), (1, "dear", "try", None)]
    );
    assert!(e
        .candidates
        .iter()
        .all(|c| c.score.is_some() && c.stats.is_some()));
    assert!(e.candidates[0].score > e.candidates[1].score);
}

#[test]
fn a_known_name_with_no_candidate_today_is_explained_as_an_empty_chain() {
    let mut c = cfg();
    add_alias(
        &mut c,
        "long",
        r#"{"capabilities":["chat"],"min_context_window":128000}"#,
    );
    let none = SortedMap::new();
    let e = run(&c, "model=long", &none);
    assert_eq!((e.model.as_str(), e.candidates.len()), ("long", 0));
}

#[test]
fn in_degraded_mode_a_due_breaker_is_explained_as_skipped_for_the_scheduled_probe() {
    let mut c = cfg();
    add_model(&mut c, "a", "openai", 1.0);
    add_model(&mut c, "b", "together", 1.0);
    add_rule_json(&mut c, r#"{"match":"best","chain":["a","b"]}"#);
    let open_ms = Defaults::default().settings.breaker.open_duration_ms;
    let snaps = SortedMap::from([("openai".to_owned(), tripped("a"))]);
    let later = |c: &TenantConfig| {
        let q = ExplainQuery::parse(Some("model=best")).unwrap();
        let dry = DryRun {
            snapshots: &snaps,
            now_ms: NOW + open_ms,
            draw: 0,
            request_budget_ms: 60_000,
        };
        let e = explain(c, &q, &dry).unwrap();
        let first = &e.candidates[0];
        (
            first.decision.as_str(),
            first.reason.map(|r| r.as_str()),
            first.until,
        )
    };
    assert_eq!(
        later(&c),
        ("try", None, None),
        "past its end: this request probes"
    );
    c.settings.probes = true;
    c.settings = c.settings.clone().with_degraded_since(Some(NOW));
    assert_eq!(later(&c), ("skip", Some("breaker_open"), None));
}

#[test]
fn links_and_the_tenant_fallback_are_shown_as_chain_positions_with_why() {
    let mut c = cfg();
    add_model(&mut c, "a", "openai", 1.0);
    add_model(&mut c, "b", "together", 2.0);
    add_model(&mut c, "safe", "together", 3.0);
    if let Some(m) = c.models.get_mut("a") {
        m.fallback_model = ModelId::parse("b").ok();
    }
    c.settings.fallback_model = crate::config::RouteName::parse("safe").ok();
    let none = SortedMap::new();
    let shown = |q: &str| {
        run(&c, q, &none)
            .candidates
            .iter()
            .map(|x| (x.position, x.model.clone(), x.via.map(|v| v.as_str())))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        shown("model=a"),
        [
            (0, "a".to_owned(), None),
            (1, "b".to_owned(), Some("fallback_model"))
        ]
    );
    assert_eq!(
        shown("model=b"),
        [
            (0, "b".to_owned(), None),
            (1, "safe".to_owned(), Some("tenant_fallback"))
        ]
    );
}

#[test]
fn each_candidate_shows_its_effective_price_at_the_cached_share_its_order_read() {
    use crate::routing::test_config::{add_model_json, cached, Table};
    let mut c = cfg();
    add_model_json(
        &mut c,
        "list",
        "openai",
        r#""input_price_per_mtok":1,"output_price_per_mtok":1"#,
    );
    let cacheable =
        r#""input_price_per_mtok":3,"output_price_per_mtok":0.5,"cached_input_price_per_mtok":0.3"#;
    add_model_json(&mut c, "cacheable", "together", cacheable);
    add_alias(&mut c, "cheap", r#"{"capabilities":["chat"]}"#);
    add_rule_json(&mut c, r#"{"match":"r","chain":["cheap","list"]}"#);
    // As the edge resolves a config at load: at the shares its live stats hold.
    crate::routing::resolve::resolve_aliases_with(&c, &Table::of([("cacheable", cached(0.8))]));
    let e = run(&c, "model=r", &SortedMap::new());
    let shown: Vec<(&str, f64, Option<f64>)> = e
        .candidates
        .iter()
        .map(|c| (c.model.as_str(), c.effective_price_per_mtok, c.cached_share))
        .collect();
    let effective = 3.0 * (1.0 - 0.8) + 0.3 * 0.8 + 0.5;
    assert_eq!(
        shown,
        [("cacheable", effective, Some(0.8)), ("list", 2.0, None)]
    );
    // Nothing measured: the list prices, and no share.
    let mut unmeasured = c.clone_unresolved();
    unmeasured.aliases = c.aliases.clone();
    let e = run(&unmeasured, "model=r", &SortedMap::new());
    assert_eq!(e.candidates[0].model, "list", "the seed order");
    assert_eq!(e.candidates[0].effective_price_per_mtok, 2.0);
    assert_eq!(e.candidates[0].cached_share, None);
}
