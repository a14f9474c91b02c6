//! What an upstream answer means for the cascade.

use serde::Serialize;

/// Why a candidate (or one key of it) failed. Only this classification reaches the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    RateLimit,
    Server,
    Timeout,
    Network,
    Auth,
    NotFound,
    UpstreamClientError,
    /// The gateway never asked: the breaker is open.
    BreakerOpen,
    /// The gateway never asked: the request's budget was spent.
    DeadlineExceeded,
    /// The gateway never asked: the prompt plus requested output does not fit the model's window.
    ContextWindow,
    /// The gateway never asked: the provider's `rpm` for this tenant was used up.
    LocalRateLimit,
    /// The gateway never asked: the candidate's provider family cannot serve this surface
    /// (embeddings on an Anthropic provider). Says nothing about the provider's health.
    Unsupported,
    /// A 2xx whose body is larger than `body_limit::MAX_SUCCESS_BODY`: this answer cannot be held,
    /// but the provider did answer, so its breaker does not count it and the cascade moves on.
    Oversized,
}

impl Failure {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RateLimit => "rate_limit",
            Self::Server => "server",
            Self::Timeout => "timeout",
            Self::Network => "network",
            Self::Auth => "auth",
            Self::NotFound => "not_found",
            Self::UpstreamClientError => "upstream_client_error",
            Self::BreakerOpen => "breaker_open",
            Self::DeadlineExceeded => "deadline_exceeded",
            Self::ContextWindow => "context_window",
            Self::LocalRateLimit => "local_rate_limit",
            Self::Unsupported => "unsupported",
            Self::Oversized => "oversized",
        }
    }

    /// Failures that say the provider (for this model) is down, and so count toward its breaker.
    /// `auth` and `not_found` count too: they only surface once every key of the pool has been
    /// refused or the model is gone upstream, and every later request would pay for the same answer.
    /// `oversized` does not: the provider answered, the answer was only too big for the isolate
    /// (another request of the same model may well fit).
    pub fn counts_toward_breaker(self) -> bool {
        matches!(
            self,
            Self::Server | Self::Timeout | Self::Network | Self::Auth | Self::NotFound
        )
    }
}

/// What to do after an upstream answered with a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusClass {
    Success,
    /// The request itself is at fault: stop the cascade and pass the provider's answer through.
    RequestCaused,
    /// A key-level refusal: try the next key of the same provider.
    NextKey(Failure),
    /// The candidate failed: move down the chain.
    NextCandidate(Failure),
}

pub fn classify_status(status: u16) -> StatusClass {
    match status {
        200..=299 => StatusClass::Success,
        400 | 413 | 422 => StatusClass::RequestCaused,
        429 => StatusClass::NextKey(Failure::RateLimit),
        401 | 403 => StatusClass::NextKey(Failure::Auth),
        404 => StatusClass::NextCandidate(Failure::NotFound),
        402..=499 => StatusClass::NextCandidate(Failure::UpstreamClientError),
        // 5xx, and anything a chat API should never answer (1xx, 3xx): the provider is misbehaving.
        _ => StatusClass::NextCandidate(Failure::Server),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_caused_4xx_never_cascades() {
        for s in [400, 413, 422] {
            assert_eq!(classify_status(s), StatusClass::RequestCaused, "{s}");
        }
    }

    #[test]
    fn rate_limit_and_auth_rotate_keys_first() {
        assert_eq!(
            classify_status(429),
            StatusClass::NextKey(Failure::RateLimit)
        );
        assert_eq!(classify_status(401), StatusClass::NextKey(Failure::Auth));
        assert_eq!(classify_status(403), StatusClass::NextKey(Failure::Auth));
    }

    #[test]
    fn other_failures_move_down_the_chain() {
        assert_eq!(
            classify_status(404),
            StatusClass::NextCandidate(Failure::NotFound)
        );
        assert_eq!(
            classify_status(409),
            StatusClass::NextCandidate(Failure::UpstreamClientError)
        );
        for s in [500, 502, 503, 504, 529] {
            assert_eq!(
                classify_status(s),
                StatusClass::NextCandidate(Failure::Server),
                "{s}"
            );
        }
    }

    #[test]
    fn a_redirect_or_informational_status_is_the_candidates_server_failure() {
        // Upstream fetches use `redirect: manual`, so a 3xx reaches the cascade as a status.
        for s in [100, 301, 302, 303, 307, 308] {
            assert_eq!(
                classify_status(s),
                StatusClass::NextCandidate(Failure::Server),
                "{s}"
            );
        }
    }

    #[test]
    fn rate_limit_does_not_count_toward_the_breaker() {
        assert!(!Failure::RateLimit.counts_toward_breaker());
        assert!(!Failure::UpstreamClientError.counts_toward_breaker());
        assert!(Failure::Server.counts_toward_breaker());
        assert!(Failure::Timeout.counts_toward_breaker());
        assert!(Failure::Network.counts_toward_breaker());
    }

    #[test]
    fn an_oversized_answer_is_not_counted_by_a_breaker_nor_retried() {
        assert_eq!(Failure::Oversized.as_str(), "oversized");
        assert!(!Failure::Oversized.counts_toward_breaker());
        assert!(!crate::cascade::retry::is_transient(Failure::Oversized));
    }
}
