//! The upstream side of the rate-limit signals: which response headers are kept for the
//! core (`cascade::rate_limit_signals` decides what they mean), and the `rate_limited_200` check.

use crate::cascade::rate_limit_signals::{is_rate_limited_body, is_signal_header};
use crate::cascade::UpstreamReply;
use crate::config::{Provider, RateLimitSignal};
use worker::Headers;

/// The reset headers of a response, and nothing else of it.
pub fn signal_headers(headers: &Headers) -> Vec<(String, String)> {
    headers
        .entries()
        .filter(|(name, _)| is_signal_header(name))
        .collect()
}

/// What a 2xx needs to become a 429 under `rate_limited_200`; `None` when the provider does not
/// read that signal (the spec: a 2xx is an answer or broken, never a rate limit).
pub struct RateLimited200 {
    retry_after: Option<String>,
    headers: Vec<(String, String)>,
}

impl RateLimited200 {
    pub fn of(provider: &Provider, headers: &Headers) -> Option<Self> {
        provider
            .resilience
            .reads(RateLimitSignal::RateLimited200)
            .then(|| Self {
                retry_after: headers.get("retry-after").ok().flatten(),
                headers: signal_headers(headers),
            })
    }

    /// The body as a 429 if it is a rate-limit error object.
    pub fn check<B>(self, bytes: &[u8]) -> Option<UpstreamReply<B>> {
        is_rate_limited_body(bytes).then(|| UpstreamReply::Status {
            status: 429,
            retry_after: self.retry_after,
            headers: self.headers,
            text: String::from_utf8_lossy(bytes).into_owned(),
        })
    }
}
