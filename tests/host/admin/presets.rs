//! The chain presets and `quality_rank` through the admin core over the in-memory store: the
//! route the worker runs on D1, its refusals, and that only the order of a rule changes.

use crate::support::admin_world::AdminWorld as World;
use crate::support::tenant::put_ranked_models;
use cognigate::admin::Verb;
use cognigate::config::TenantId;
use cognigate::routing::stats::model_stats::{OutcomeBatch, Sample};
use cognigate::routing::stats::stats_book::{StatsBook, StatsPush};
use serde_json::{json, Value};

const T: &str = "/admin/v1/tenants/acme";

/// Tenant `acme` on provider `p`: models (list price, quality rank) cheap (2, 3), mid (6, 1),
/// dear (10, -), plus a rule `coding` (chain dear, cheap, mid; a `when`; a cache TTL).
fn world() -> World {
    let w = World::with_acme();
    let provider = r#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["sk-live-abcdefgh1234"]}"#;
    w.ok(Verb::Put, &format!("{T}/providers/p"), provider);
    put_ranked_models(
        &[
            ("cheap", 1, Some(3)),
            ("mid", 3, Some(1)),
            ("dear", 5, None),
        ],
        |path, body| w.ok(Verb::Put, &format!("{T}{path}"), &body.to_string()),
    );
    let rule = json!({"name": "coding", "match": "smart", "when": {"params.stream": true},
        "chain": ["dear", "cheap", "mid"], "cache_ttl_s": 60});
    w.ok(Verb::Put, &format!("{T}/routing-rules"), &rule.to_string());
    w
}

fn sort(w: &World, rule: &str, body: &str) -> Result<(u16, Value), (u16, Value)> {
    w.call(Verb::Post, &format!("{T}/routing-rules/{rule}/sort"), body)
}

fn listed(w: &World) -> Value {
    w.ok(Verb::Get, &format!("{T}/routing-rules"), "")["data"][0].clone()
}

#[test]
fn each_preset_rewrites_only_the_order_and_answers_the_rule_as_listed() {
    let w = world();
    for (preset, chain) in [
        ("smartest", json!(["mid", "cheap", "dear"])),
        ("budget", json!(["cheap", "mid", "dear"])),
    ] {
        let (status, rule) = sort(&w, "coding", &json!({"preset": preset}).to_string()).unwrap();
        assert_eq!(status, 200);
        assert_eq!(rule["chain"], chain, "{preset}");
        assert_eq!(rule, listed(&w), "the answer is the listing's entry");
        assert_eq!(
            rule["when"],
            json!({"params.stream": true}),
            "a `when` is kept"
        );
        assert_eq!(
            (rule["match"].clone(), rule["cache_ttl_s"].clone()),
            (json!("smart"), json!(60))
        );
    }
}

#[test]
fn fastest_reads_the_live_stats_and_positions_without_stats_follow() {
    let w = world();
    let mut book = StatsBook::default();
    for (model, ms) in [("dear", 50), ("mid", 400)] {
        let mut batch = OutcomeBatch::default();
        batch.add(Sample::Served {
            ttfb_ms: ms,
            latency_ms: Some(ms),
        });
        let push = StatsPush {
            batches: [(model.to_owned(), batch)].into(),
            ..StatsPush::default()
        };
        book.fold(&push, 0);
    }
    let snap = book.snapshot(&Default::default(), 0);
    let tenant = TenantId::parse("acme").unwrap();
    w.routing
        .stats
        .borrow_mut()
        .insert((tenant, "p".to_owned()), snap);
    let (_, rule) = sort(&w, "coding", r#"{"preset":"fastest"}"#).unwrap();
    assert_eq!(rule["chain"], json!(["dear", "mid", "cheap"]));
}

#[test]
fn an_unknown_preset_or_a_malformed_body_is_400_and_an_unknown_rule_is_404() {
    let w = world();
    let before = listed(&w);
    for body in [r#"{"preset":"cheapest"}"#, r#"{"preset":1}"#] {
        let (status, e) = sort(&w, "coding", body).unwrap_err();
        assert_eq!(
            (status, e["error"]["param"].as_str()),
            (400, Some("preset")),
            "{body}: {e}"
        );
    }
    for body in ["{", "{}", r#"{"preset":"budget","extra":1}"#, ""] {
        assert_eq!(sort(&w, "coding", body).unwrap_err().0, 400, "{body}");
    }
    let (status, _) = sort(&w, "nope", r#"{"preset":"budget"}"#).unwrap_err();
    assert_eq!(status, 404);
    assert_eq!(listed(&w), before, "nothing changed");
    let (status, _) = w
        .call(Verb::Get, &format!("{T}/routing-rules/coding/sort"), "")
        .unwrap_err();
    assert_eq!(status, 405);
}

#[test]
fn a_quality_rank_of_0_is_400_naming_the_field() {
    let w = world();
    for rank in ["0", "-1"] {
        let body = format!(r#"{{"provider":"p","context_window":8000,"quality_rank":{rank}}}"#);
        let (status, e) = w.refused(Verb::Put, &format!("{T}/models/x"), &body);
        assert_eq!(
            (status, e["error"]["param"].as_str()),
            (400, Some("quality_rank")),
            "{rank}: {e}"
        );
    }
}
