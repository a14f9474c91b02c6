use super::*;
use crate::config::admin_body::{parse_body, ModelBody};
use crate::config::ModelId;

fn model(prices: &str) -> CatalogModel {
    let m: ModelBody =
        parse_body(format!(r#"{{"provider":"p","context_window":8000{prices}}}"#).as_bytes())
            .unwrap();
    m.validate(ModelId::parse("m").unwrap()).unwrap()
}

fn t(prompt: u64, completion: u64, cached: u64) -> TokenCounts {
    TokenCounts::new(prompt, completion, cached)
}

#[test]
fn cost_is_uncached_input_plus_cached_input_plus_output_per_million_tokens() {
    let m = model(
        r#","input_price_per_mtok":2.5,"output_price_per_mtok":10,"cached_input_price_per_mtok":1.25"#,
    );
    // 900 × 2.5 + 100 × 1.25 + 50 × 10 = 2250 + 125 + 500 = 2875 per million.
    assert!((cost_usd(&t(1_000, 50, 100), &m) - 0.002875).abs() < 1e-12);
}

#[test]
fn without_a_cached_input_price_cached_input_costs_the_input_price() {
    let m = model(r#","input_price_per_mtok":2,"output_price_per_mtok":8"#);
    assert_eq!(
        cost_usd(&t(1_000, 0, 400), &m),
        cost_usd(&t(1_000, 0, 0), &m)
    );
    assert!((cost_usd(&t(1_000, 0, 400), &m) - 0.002).abs() < 1e-12);
}

#[test]
fn a_free_model_costs_zero() {
    assert_eq!(cost_usd(&t(10, 10, 0), &model("")), 0.0);
}

#[test]
fn the_cost_header_is_a_decimal_without_exponent_and_without_trailing_zeros() {
    assert_eq!(usd_decimal(0.000002), "0.000002");
    assert_eq!(usd_decimal(2e-6), "0.000002");
    assert_eq!(usd_decimal(0.002875), "0.002875");
    assert_eq!(usd_decimal(1.5), "1.5");
    assert_eq!(usd_decimal(12.0), "12");
    assert_eq!(usd_decimal(0.0), "0");
    assert_eq!(usd_decimal(1.5e-7), "0.00000015");
    assert_eq!(usd_decimal(1e-12), "0", "below the last kept digit");
    // A sum with float noise shows the cost, not the noise.
    assert_eq!(usd_decimal(0.1 + 0.2), "0.3");
    assert!(!usd_decimal(123_456.789).contains('e'));
}

#[test]
fn one_token_at_the_smallest_prices_still_shows_a_cost() {
    let m = model(r#","input_price_per_mtok":0.02"#);
    assert_eq!(usd_decimal(cost_usd(&t(1, 0, 0), &m)), "0.00000002");
}

const ANTHROPIC: &str =
    r#","input_price_per_mtok":3,"output_price_per_mtok":15,"cached_input_price_per_mtok":0.3"#;

#[test]
fn cache_writes_are_charged_at_their_write_prices_which_default_to_1_25_and_2_times_input() {
    let m = model(ANTHROPIC);
    // 10 uncached × 3 + 1000 read × 0.3 + 100 × 3.75 + 200 × 6 + 4 × 15
    // = 30 + 300 + 375 + 1200 + 60 = 1965 per million.
    let tokens = t(1_310, 4, 1_000).with_writes(100, 200);
    assert!((cost_usd(&tokens, &m) - 0.001965).abs() < 1e-12);
    let priced = model(&format!(
        r#"{ANTHROPIC},"cache_write_price_per_mtok":4,"cache_write_1h_price_per_mtok":5"#
    ));
    // 30 + 300 + 100 × 4 + 200 × 5 + 60 = 1790.
    assert!((cost_usd(&tokens, &priced) - 0.00179).abs() < 1e-12);
}

#[test]
fn an_answer_without_cache_writes_costs_what_it_did_before_write_prices() {
    let m = model(ANTHROPIC);
    let before = |tk: &TokenCounts| {
        ((tk.prompt - tk.cached) as f64 * 3.0
            + tk.cached as f64 * 0.3
            + tk.completion as f64 * 15.0)
            / 1e6
    };
    for tk in [t(1_000, 50, 0), t(1_000, 50, 400), t(0, 0, 0)] {
        assert_eq!(cost_usd(&tk, &m), before(&tk));
        assert_eq!(cache_savings_usd(&tk, &m).is_some(), tk.cached > 0);
    }
}

#[test]
fn writes_never_count_beyond_the_uncached_prompt() {
    let m = model(ANTHROPIC);
    // 100 prompt tokens, 80 of them reads: at most 20 writes, 1-hour ones first.
    let tokens = t(100, 0, 80).with_writes(50, 50);
    assert!((cost_usd(&tokens, &m) - (80.0 * 0.3 + 20.0 * 6.0) / 1e6).abs() < 1e-15);
}

#[test]
fn savings_are_the_reads_discount_minus_the_writes_premium_over_input() {
    let m = model(ANTHROPIC);
    // Reads: 1000 × (3 − 0.3) = 2700; writes: 100 × 0.75 + 200 × 3 = 675; net 2025.
    let tokens = t(1_310, 4, 1_000).with_writes(100, 200);
    let saved = cache_savings_usd(&tokens, &m).unwrap();
    assert!((saved - 0.002025).abs() < 1e-12, "{saved}");
    // What the answer would have cost uncached, minus what it cost.
    let uncached = cost_usd(&t(1_310, 4, 0), &m);
    assert!((saved - (uncached - cost_usd(&tokens, &m))).abs() < 1e-12);
}

#[test]
fn a_write_never_read_makes_the_savings_negative() {
    let m = model(ANTHROPIC);
    let saved = cache_savings_usd(&t(1_000, 0, 0).with_writes(1_000, 0), &m).unwrap();
    assert!((saved + 0.00075).abs() < 1e-12, "{saved}");
}
