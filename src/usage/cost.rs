//! What an answer cost, from the serving model's catalog prices (USD per million tokens), and
//! what the provider's prompt cache saved it.

use super::TokenCounts;
use crate::config::CatalogModel;

/// The prompt's parts, each at most what is left of the prompt: (uncached, cache reads,
/// 5-minute writes, 1-hour writes). Reported counts are the answer's data, never trusted to add
/// up.
fn parts(tokens: &TokenCounts) -> (u64, u64, u64, u64) {
    let read = tokens.cached.min(tokens.prompt);
    let w1h = tokens.cache_write_1h.min(tokens.prompt - read);
    let w5 = tokens.cache_write.min(tokens.prompt - read - w1h);
    (tokens.prompt - read - w1h - w5, read, w5, w1h)
}

/// (prompt − cached − writes) × input + cached × cached input (else input) + 5-minute writes ×
/// the write price (else 1.25 × input) + 1-hour writes × the 1-hour write price (else 2 ×
/// input) + completion × output, per million tokens. An answer without cache writes costs what
/// it did before write prices existed.
pub fn cost_usd(tokens: &TokenCounts, model: &CatalogModel) -> f64 {
    let (uncached, read, w5, w1h) = parts(tokens);
    (uncached as f64 * model.input_price_per_mtok
        + read as f64 * model.cache_read_price()
        + w5 as f64 * model.cache_write_price()
        + w1h as f64 * model.cache_write_1h_price()
        + tokens.completion as f64 * model.output_price_per_mtok)
        / 1_000_000.0
}

/// What the prompt cache saved an answer, net: its reads at the input price minus their cached
/// price, minus what its writes cost above the input price. Negative when the writes cost more
/// than the reads saved (a prefix written and never read again). `None` when the answer
/// neither read nor wrote the cache, so such an answer carries no savings at all.
pub fn cache_savings_usd(tokens: &TokenCounts, model: &CatalogModel) -> Option<f64> {
    let (_, read, w5, w1h) = parts(tokens);
    if read == 0 && w5 == 0 && w1h == 0 {
        return None;
    }
    let input = model.input_price_per_mtok;
    Some(
        (read as f64 * (input - model.cache_read_price())
            - w5 as f64 * (model.cache_write_price() - input)
            - w1h as f64 * (model.cache_write_1h_price() - input))
            / 1_000_000.0,
    )
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
#[path = "cost_tests.rs"]
mod tests;
