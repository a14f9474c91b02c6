//! The rate-limit headers of an answer, success or error, as headroom figures
//! (`health::headroom`), by provider family:
//!
//! - OpenAI-compatible (OpenAI, Groq) and Azure OpenAI: `x-ratelimit-remaining-{requests,tokens}`
//!   with `x-ratelimit-limit-*` and the `x-ratelimit-reset-*` durations (Azure gives remaining
//!   only: the stand-in limit covers it); Together's unsuffixed `x-ratelimit-remaining`,
//!   `x-ratelimit-limit` and `x-ratelimit-reset` (seconds);
//! - Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,
//!   limit,reset}`, the reset an RFC 3339 time.
//!
//! A family without a readable remaining count gives no figure.

use super::rate_limit_signals::{duration_ms, rfc3339_ms};
use crate::config::ProviderKind;
use crate::health::headroom::{Family, Figure};

/// Whether the edge keeps `name` (lowercase) for `read`.
pub fn is_quota_header(name: &str) -> bool {
    name.starts_with("x-ratelimit-remaining")
        || name.starts_with("x-ratelimit-limit")
        || name == "x-ratelimit-reset"
        || name.starts_with("anthropic-ratelimit-")
}

const X_FAMILIES: [(Family, &str); 3] = [
    (Family::Requests, "-requests"),
    (Family::Tokens, "-tokens"),
    (Family::All, ""),
];
const ANTHROPIC_FAMILIES: [(Family, &str); 4] = [
    (Family::Requests, "requests"),
    (Family::Tokens, "tokens"),
    (Family::InputTokens, "input-tokens"),
    (Family::OutputTokens, "output-tokens"),
];

/// The figures `headers` report for a provider of `kind`, read at `now`.
pub fn read(kind: ProviderKind, headers: &[(String, String)], now: u64) -> Vec<Figure> {
    let value = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    let count = |name: &str| value(name).and_then(whole_number);
    let mut figures = Vec::new();
    match kind {
        ProviderKind::Openai | ProviderKind::AzureOpenai => {
            for (family, suffix) in X_FAMILIES {
                let Some(remaining) = count(&format!("x-ratelimit-remaining{suffix}")) else {
                    continue;
                };
                let limit = count(&format!("x-ratelimit-limit{suffix}"));
                let reset = value(&format!("x-ratelimit-reset{suffix}"))
                    .and_then(|v| {
                        whole_number(v)
                            .map(|s| s.saturating_mul(1000))
                            .or_else(|| duration_ms(v))
                    })
                    .map(|ms| now.saturating_add(ms));
                figures.push(Figure::read(family, remaining, limit, reset, now));
            }
        }
        ProviderKind::Anthropic => {
            for (family, name) in ANTHROPIC_FAMILIES {
                let at = |part: &str| format!("anthropic-ratelimit-{name}-{part}");
                let Some(remaining) = count(&at("remaining")) else {
                    continue;
                };
                let limit = count(&at("limit"));
                let reset = value(&at("reset")).and_then(rfc3339_ms);
                figures.push(Figure::read(family, remaining, limit, reset, now));
            }
        }
        ProviderKind::Bedrock | ProviderKind::Vertex | ProviderKind::Gemini => {}
    }
    figures
}

/// A count as providers write it: digits, or a number with a fraction (floored).
fn whole_number(text: &str) -> Option<u64> {
    text.parse::<u64>().ok().or_else(|| {
        text.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f.floor() as u64)
    })
}

#[cfg(test)]
#[path = "quota_headers_tests.rs"]
mod tests;
