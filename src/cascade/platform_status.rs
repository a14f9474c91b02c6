//! An upstream's error answer read by its kind's rules: the verdict, and how long a rate-limited
//! key is parked.
//!
//! - OpenAI and Anthropic keep the spec's reading: the status decides, `Retry-After` parks (and
//!   the opt-in signals of `rate_limit_signals`).
//! - Azure OpenAI's `retry-after-ms` wins over `Retry-After`.
//! - Bedrock's errors are read by their type (`x-amzn-ErrorType` or `__type`), never the status;
//!   Google's (Gemini, Vertex) by the envelope's reason, a 429 parked for its `retryDelay`.
//! - The cloud kinds throttle without a reset hint more often than not (Bedrock and Vertex send
//!   none): their throttle without one parks the key for `CLOUD_THROTTLE_PARK_MS`, so the next
//!   request starts from another key or candidate.
//! - A provider's `rate_limit_cooldown_ms` parks every hintless 429 of its keys that long, and
//!   its `max_park_ms` caps every park in place of the deployment's `MAX_PARK_MS`.

use super::rate_limit_signals::park_for;
use super::{classify_status, Failure, StatusClass};
use crate::config::{Provider, ProviderKind};
use crate::providers::{bedrock, gemini, Dialect, ErrorClass};

/// How long a cloud kind's throttle without a hint parks its key.
pub const CLOUD_THROTTLE_PARK_MS: u64 = 10_000;

/// An error answer as the cascade reads it.
pub struct StatusAnswer<'a> {
    pub status: u16,
    pub retry_after: Option<&'a str>,
    /// The reset headers the edge kept (`rate_limit_signals::is_signal_header`).
    pub headers: &'a [(String, String)],
    pub text: &'a str,
}

/// The verdict on `answer`, and the park of its key in ms (already clamped to `max_ms`, the
/// provider's `max_park_ms` or the deployment's cap).
pub fn read_status(
    provider: &Provider,
    answer: &StatusAnswer<'_>,
    now_ms: u64,
    max_ms: u64,
) -> (StatusClass, Option<u64>) {
    let (class, google_park) = match Dialect::of(provider) {
        Dialect::Bedrock => (
            bedrock::errors::classify(
                answer.status,
                header(answer.headers, "x-amzn-errortype"),
                answer.text,
            ),
            None,
        ),
        Dialect::Gemini => gemini::errors::classify(answer.status, answer.text),
        // Vertex's Claude answers in Google's envelope (quota, auth, not found) or Anthropic's.
        Dialect::Anthropic if provider.kind == ProviderKind::Vertex => {
            gemini::errors::classify(answer.status, answer.text)
        }
        Dialect::Openai | Dialect::Anthropic => (None, None),
    };
    let verdict = class.map_or_else(|| classify_status(answer.status), verdict_of);
    let google_park = google_park.map(|ms| ms.min(max_ms));
    let hinted = || {
        let ms_header = (provider.kind == ProviderKind::AzureOpenai)
            .then(|| header(answer.headers, "retry-after-ms"))
            .flatten()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|ms| ms.is_finite() && *ms >= 1.0)
            .map(|ms| (ms as u64).min(max_ms));
        ms_header.or_else(|| {
            park_for(
                &provider.resilience,
                answer.retry_after,
                answer.headers,
                now_ms,
                max_ms,
            )
        })
    };
    let park = match verdict {
        StatusClass::NextKey(Failure::RateLimit) => google_park
            .or_else(hinted)
            .or_else(|| hintless_park(provider))
            .map(|ms| ms.min(max_ms)),
        _ => None,
    };
    (verdict, park)
}

/// A 429 carrying no hint the gateway reads: the provider's `rate_limit_cooldown_ms`, else a
/// cloud kind's `CLOUD_THROTTLE_PARK_MS`, else (the spec's rule) no park.
pub fn hintless_park(provider: &Provider) -> Option<u64> {
    provider
        .resilience
        .rate_limit_cooldown_ms
        .or_else(|| is_cloud(provider.kind).then_some(CLOUD_THROTTLE_PARK_MS))
}

/// A family's error class as the cascade acts on it.
fn verdict_of(class: ErrorClass) -> StatusClass {
    match class {
        ErrorClass::RateLimit => StatusClass::NextKey(Failure::RateLimit),
        ErrorClass::Auth => StatusClass::NextKey(Failure::Auth),
        ErrorClass::Server => StatusClass::NextCandidate(Failure::Server),
        ErrorClass::Timeout => StatusClass::NextCandidate(Failure::Timeout),
        ErrorClass::NotFound => StatusClass::NextCandidate(Failure::NotFound),
        ErrorClass::UpstreamClientError => StatusClass::NextCandidate(Failure::UpstreamClientError),
        ErrorClass::RequestCaused => StatusClass::RequestCaused,
    }
}

fn is_cloud(kind: ProviderKind) -> bool {
    matches!(
        kind,
        ProviderKind::AzureOpenai
            | ProviderKind::Bedrock
            | ProviderKind::Vertex
            | ProviderKind::Gemini
    )
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[cfg(test)]
#[path = "platform_status_tests.rs"]
mod tests;
