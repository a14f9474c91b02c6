//! What an answer cost, from the serving model's catalog prices (USD per million tokens).

use super::TokenCounts;
use crate::config::CatalogModel;

/// (prompt − cached) × input + cached × cached input (else input) + completion × output, per
/// million tokens.
pub fn cost_usd(tokens: &TokenCounts, model: &CatalogModel) -> f64 {
    let cached = tokens.cached.min(tokens.prompt);
    let uncached = tokens.prompt - cached;
    let cached_price = model
        .cached_input_price_per_mtok
        .unwrap_or(model.input_price_per_mtok);
    (uncached as f64 * model.input_price_per_mtok
        + cached as f64 * cached_price
        + tokens.completion as f64 * model.output_price_per_mtok)
        / 1_000_000.0
}

/// Digits kept after the point: a token at $0.01 per million is $0.00000001, and a
/// request's cost rounds to its 1e-10 place without showing float noise.
const DECIMALS: usize = 10;

/// The cost as a plain decimal string for `X-CogniGate-Cost-Usd`: never an exponent, trailing
/// zeros trimmed (`0.000002`, `1.5`, `0`).
pub fn usd_decimal(cost: f64) -> String {
    if !cost.is_finite() || cost <= 0.0 {
        return "0".to_owned();
    }
    let fixed = format!("{cost:.DECIMALS$}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    if trimmed.is_empty() {
        "0".to_owned()
    } else {
        trimmed.to_owned()
    }
}

#[cfg(test)]
mod tests {
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
        TokenCounts {
            prompt,
            completion,
            cached,
        }
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
}
