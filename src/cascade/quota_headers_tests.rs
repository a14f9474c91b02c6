use super::*;
use crate::health::headroom::{Headrooms, UNRESET_MS};

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn headroom(kind: ProviderKind, pairs: &[(&str, &str)], now: u64) -> Option<f64> {
    let mut rooms = Headrooms::default();
    rooms.see("k", &read(kind, &h(pairs), now));
    rooms.headroom("k", now)
}

#[test]
fn openai_and_groq_report_requests_and_tokens_with_their_limits_and_resets() {
    let pairs = [
        ("x-ratelimit-limit-requests", "100"),
        ("x-ratelimit-remaining-requests", "60"),
        ("x-ratelimit-reset-requests", "1m30s"),
        ("x-ratelimit-limit-tokens", "10000"),
        ("x-ratelimit-remaining-tokens", "500"),
        ("x-ratelimit-reset-tokens", "6s"),
    ];
    let figures = read(ProviderKind::Openai, &h(&pairs), 1_000);
    assert_eq!(figures.len(), 2);
    assert_eq!(figures[0].until, 91_000);
    assert_eq!(figures[1].until, 7_000);
    assert_eq!(headroom(ProviderKind::Openai, &pairs, 1_000), Some(0.05));
}

#[test]
fn azure_gives_remaining_only_and_the_largest_seen_stands_in_as_the_limit() {
    let figures = read(
        ProviderKind::AzureOpenai,
        &h(&[("x-ratelimit-remaining-requests", "7")]),
        0,
    );
    assert_eq!(figures.len(), 1);
    assert_eq!((figures[0].limit, figures[0].largest), (None, 7));
    assert_eq!(figures[0].until, UNRESET_MS, "no reset: 60 s");
}

#[test]
fn together_reports_the_unsuffixed_forms() {
    let pairs = [
        ("x-ratelimit-limit", "600"),
        ("x-ratelimit-remaining", "60"),
        ("x-ratelimit-reset", "2"),
    ];
    let figures = read(ProviderKind::Openai, &h(&pairs), 1_000);
    assert_eq!(figures.len(), 1);
    assert_eq!(figures[0].family, Family::All);
    assert_eq!(figures[0].until, 3_000);
    assert_eq!(headroom(ProviderKind::Openai, &pairs, 1_000), Some(0.1));
}

#[test]
fn anthropic_reports_four_families_with_rfc3339_resets() {
    let pairs = [
        ("anthropic-ratelimit-requests-limit", "50"),
        ("anthropic-ratelimit-requests-remaining", "49"),
        ("anthropic-ratelimit-requests-reset", "2026-12-06T03:00:05Z"),
        ("anthropic-ratelimit-input-tokens-limit", "1000"),
        ("anthropic-ratelimit-input-tokens-remaining", "300"),
        ("anthropic-ratelimit-output-tokens-remaining", "90"),
        ("anthropic-ratelimit-output-tokens-limit", "100"),
    ];
    let figures = read(ProviderKind::Anthropic, &h(&pairs), 0);
    assert_eq!(figures.len(), 3);
    assert_eq!(
        figures[0].until,
        rfc3339_ms("2026-12-06T03:00:05Z").unwrap()
    );
    assert_eq!(headroom(ProviderKind::Anthropic, &pairs, 1), Some(0.3));
    assert!(
        read(ProviderKind::Openai, &h(&pairs), 0).is_empty(),
        "read by the provider's family"
    );
}

#[test]
fn an_unreadable_remaining_gives_no_figure_and_the_cloud_kinds_report_none() {
    let pairs = [
        ("x-ratelimit-remaining-requests", "lots"),
        ("x-ratelimit-limit-requests", "9"),
    ];
    assert!(read(ProviderKind::Openai, &h(&pairs), 0).is_empty());
    let fine = [("x-ratelimit-remaining-requests", "3.0")];
    assert_eq!(read(ProviderKind::Openai, &h(&fine), 0)[0].remaining, 3);
    assert!(read(ProviderKind::Bedrock, &h(&fine), 0).is_empty());
}

#[test]
fn the_edge_keeps_the_quota_headers_beside_the_reset_signals() {
    for name in [
        "x-ratelimit-remaining-tokens",
        "x-ratelimit-limit",
        "x-ratelimit-reset",
        "anthropic-ratelimit-tokens-remaining",
    ] {
        assert!(is_quota_header(name), "{name}");
    }
    assert!(!is_quota_header("content-type"));
}
