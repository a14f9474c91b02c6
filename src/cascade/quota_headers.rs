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

/// What one family's headers said: remaining, limit and reset (as read).
#[derive(Default, Clone, Copy)]
struct Said<'a> {
    remaining: Option<&'a str>,
    limit: Option<&'a str>,
    reset: Option<&'a str>,
}

/// Which family and part a header names, for a provider of `kind`: `(family, part)` with part
/// `remaining`, `limit` or `reset`.
fn named(kind: ProviderKind, name: &str) -> Option<(Family, &str)> {
    let (family, part) = match kind {
        ProviderKind::Openai | ProviderKind::AzureOpenai => {
            let rest = name.strip_prefix("x-ratelimit-")?;
            match rest.split_once('-') {
                None => (Family::All, rest),
                Some((part, "requests")) => (Family::Requests, part),
                Some((part, "tokens")) => (Family::Tokens, part),
                Some(_) => return None,
            }
        }
        ProviderKind::Anthropic => {
            let (family, part) = name
                .strip_prefix("anthropic-ratelimit-")?
                .rsplit_once('-')?;
            let family = match family {
                "requests" => Family::Requests,
                "tokens" => Family::Tokens,
                "input-tokens" => Family::InputTokens,
                "output-tokens" => Family::OutputTokens,
                _ => return None,
            };
            (family, part)
        }
        ProviderKind::Bedrock | ProviderKind::Vertex | ProviderKind::Gemini => return None,
    };
    Some((family, part))
}

const ORDER: [Family; 5] = [
    Family::Requests,
    Family::Tokens,
    Family::InputTokens,
    Family::OutputTokens,
    Family::All,
];

/// The figures `headers` report for a provider of `kind`, read at `now`.
pub fn read(kind: ProviderKind, headers: &[(String, String)], now: u64) -> Vec<Figure> {
    let mut said = [Said::default(); 5];
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        let Some((family, part)) = named(kind, &name) else {
            continue;
        };
        let Some(at) = ORDER.iter().position(|f| *f == family) else {
            continue;
        };
        let slot = match part {
            "remaining" => &mut said[at].remaining,
            "limit" => &mut said[at].limit,
            "reset" => &mut said[at].reset,
            _ => continue,
        };
        *slot = Some(value.trim());
    }
    let reset_at = |reset: &str| match kind {
        ProviderKind::Anthropic => rfc3339_ms(reset),
        // OpenAI's durations (`1m30s`), or Together's seconds.
        _ => whole_number(reset)
            .map(|s| s.saturating_mul(1000))
            .or_else(|| duration_ms(reset))
            .map(|ms| now.saturating_add(ms)),
    };
    ORDER
        .iter()
        .zip(said)
        .filter_map(|(family, said)| {
            let remaining = whole_number(said.remaining?)?;
            let limit = said.limit.and_then(whole_number);
            let reset = said.reset.and_then(reset_at);
            Some(Figure::read(*family, remaining, limit, reset, now))
        })
        .collect()
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
