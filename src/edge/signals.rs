//! The upstream side of the rate-limit signals: which response headers are kept for the
//! core (`cascade::rate_limit_signals` decides what they mean), and the `rate_limited_200` check.

use crate::cascade::rate_limit_signals::{is_rate_limited_body, of_answer, signal_pairs};
use crate::cascade::UpstreamReply;
use crate::config::{Provider, RateLimitSignal};

/// What a 2xx needs to become a 429 under `rate_limited_200`; `None` when the provider does not
/// read that signal (the spec: a 2xx is an answer or broken, never a rate limit).
pub struct RateLimited200 {
    retry_after: Option<String>,
    headers: Vec<(String, String)>,
}

impl RateLimited200 {
    /// `lines`: the answer's headers as one text (`api::header_lines`).
    pub fn of(provider: &Provider, lines: &str) -> Option<Self> {
        provider
            .resilience
            .reads(RateLimitSignal::RateLimited200)
            .then(|| Self {
                retry_after: of_answer(lines).0,
                headers: signal_pairs(lines),
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
