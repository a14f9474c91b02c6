//! Same-candidate retries: which failures are
//! retried, on which key, and after how long. The spec has none; `max_retries: 0` keeps it so.

use super::Failure;
use crate::config::{KeyId, RetryPolicy};

/// A failure worth asking the same candidate again for: `server` (Anthropic's 529 included),
/// `timeout` and `network`. Never a request-caused 4xx, `auth` or a 429 (those rotate keys or
/// stop), and never a stream after its first data event (it was served, so it is not a failure
/// the cascade sees).
pub fn is_transient(failure: Failure) -> bool {
    matches!(
        failure,
        Failure::Server | Failure::Timeout | Failure::Network
    )
}

/// Full-jitter exponential backoff before retry `n` (1 for the first retry): uniform in
/// `0..=min(max_delay_ms, base_delay_ms * 2^(n-1))`, drawn from `random` (64 uniform bits).
pub fn backoff_ms(policy: &RetryPolicy, n: u32, random: u64) -> u64 {
    let exp = policy
        .base_delay_ms
        .saturating_mul(1u64.checked_shl(n.saturating_sub(1)).unwrap_or(u64::MAX));
    let cap = exp.min(policy.max_delay_ms);
    // Scales the 64 bits onto 0..=cap without the bias of a modulo.
    let scaled = ((u128::from(cap) + 1) * u128::from(random)) >> 64;
    u64::try_from(scaled).unwrap_or(cap).min(cap)
}

/// The next try starts on the key after the one that just failed, where the pool has another.
pub fn after(keys: &[KeyId], failed: Option<&str>) -> Vec<KeyId> {
    match failed.and_then(|f| keys.iter().position(|k| k.as_str() == f)) {
        Some(i) if keys.len() > 1 => keys[i + 1..].iter().chain(&keys[..=i]).cloned().collect(),
        _ => keys.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: RetryPolicy = RetryPolicy {
        max_retries: 5,
        base_delay_ms: 100,
        max_delay_ms: 2_000,
    };

    #[test]
    fn backoff_is_full_jitter_under_an_exponential_cap() {
        let caps: Vec<u64> = (1..=7).map(|n| backoff_ms(&P, n, u64::MAX)).collect();
        assert_eq!(caps, [100, 200, 400, 800, 1_600, 2_000, 2_000]);
        assert_eq!(backoff_ms(&P, 1, 0), 0);
        assert_eq!(
            backoff_ms(&P, 3, u64::MAX / 2),
            200,
            "the middle of 0..=400"
        );
        assert_eq!(backoff_ms(&P, 60, u64::MAX), 2_000, "no overflow");
    }

    #[test]
    fn only_server_timeout_and_network_failures_are_retried() {
        for f in [Failure::Server, Failure::Timeout, Failure::Network] {
            assert!(is_transient(f), "{f:?}");
        }
        for f in [
            Failure::RateLimit,
            Failure::Auth,
            Failure::NotFound,
            Failure::UpstreamClientError,
            Failure::BreakerOpen,
            Failure::DeadlineExceeded,
            Failure::ContextWindow,
            Failure::LocalRateLimit,
        ] {
            assert!(!is_transient(f), "{f:?}");
        }
    }

    #[test]
    fn a_retry_moves_to_the_next_key_of_the_pool_where_there_is_one() {
        let keys: Vec<KeyId> = ["a", "b", "c"].map(KeyId::from).to_vec();
        assert_eq!(after(&keys, Some("b")), ["c", "a", "b"]);
        assert_eq!(after(&keys, Some("c")), ["a", "b", "c"]);
        assert_eq!(after(&keys[..1], Some("a")), ["a"]);
        assert_eq!(after(&keys, None), keys);
    }
}
