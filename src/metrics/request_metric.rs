//! A request's ending as the metrics and the log line's `level` name it. Pure, so the
//! request path and its tests read the same mapping.

use crate::cascade::{CandidateAttempt, Failure};
use crate::metrics::counts::MetricOutcome;

/// Every upstream call of the cascade as (provider, model, failure class): `none` for an
/// answer, `refusal` for an answer that was a safety refusal. Candidates skipped without a call
/// (breaker open, parked keys, `rpm`, context window) made no upstream call and are not listed.
pub fn upstream_calls(attempts: &[CandidateAttempt]) -> Vec<(String, String, &'static str)> {
    attempts
        .iter()
        .flat_map(|a| {
            let last = a.tries.len().saturating_sub(1);
            a.tries.iter().enumerate().map(move |(i, t)| {
                let failure = match t.failure {
                    Some(f) => f.as_str(),
                    None if a.refusal && i == last => "refusal",
                    None => "none",
                };
                (a.provider.clone(), a.model.clone(), failure)
            })
        })
        .collect()
}

/// A cascade that served nothing: `exhausted` when some upstream was called, `no_candidates`
/// when every candidate was skipped without a call. Its depth: the positions that failed, as
/// `X-CogniGate-Fallback-Depth` counts them (retries and context-window skips cost none).
pub fn unserved(attempts: &[CandidateAttempt]) -> (MetricOutcome, u32) {
    let called = attempts.iter().any(|a| !a.tries.is_empty());
    let outcome = if called {
        MetricOutcome::Exhausted
    } else {
        MetricOutcome::NoCandidates
    };
    let depth = attempts
        .iter()
        .filter(|a| a.retry.unwrap_or(0) == 0 && a.failure != Some(Failure::ContextWindow))
        .count();
    (outcome, u32::try_from(depth).unwrap_or(u32::MAX))
}

/// The log line's `level`: `info` for an answer served (after a refusal too, when a fallback
/// answered), `error` for the gateway's own failure (a bare 500), `warn` for every other
/// ending (exhausted, no candidates, limits, refusals, rejected input, cancelled).
pub fn level(outcome: &str, status: u16) -> &'static str {
    match (outcome, status) {
        ("served" | "refusal_applied" | "cache_hit", _) => "info",
        (_, 500) => "error",
        _ => "warn",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cascade::KeyTry;

    fn attempt(model: &str, failure: Option<Failure>, tries: usize) -> CandidateAttempt {
        CandidateAttempt {
            provider: "p".into(),
            model: model.into(),
            failure,
            status: None,
            tries: (0..tries)
                .map(|_| KeyTry {
                    at: 0,
                    key_id: "key_1".into(),
                    status: None,
                    failure,
                    error: None,
                    ms: 1,
                })
                .collect(),
            retry: None,
            ends_at: None,
            truncated: None,
            refusal: false,
        }
    }

    #[test]
    fn every_upstream_call_is_counted_with_its_failure_class_or_none_and_skips_are_not() {
        let attempts = [
            attempt("m1", Some(Failure::BreakerOpen), 0),
            attempt("m2", Some(Failure::Server), 2),
            attempt("m3", None, 1),
        ];
        let calls = upstream_calls(&attempts);
        assert_eq!(
            calls,
            [
                ("p".into(), "m2".into(), "server"),
                ("p".into(), "m2".into(), "server"),
                ("p".into(), "m3".into(), "none")
            ]
        );
    }

    #[test]
    fn a_request_whose_every_candidate_was_skipped_is_no_candidates_and_one_with_a_failed_call_exhausted(
    ) {
        let skipped = [attempt("m1", Some(Failure::BreakerOpen), 0)];
        assert_eq!(unserved(&skipped).0, MetricOutcome::NoCandidates);
        let failed = [
            attempt("m1", Some(Failure::BreakerOpen), 0),
            attempt("m2", Some(Failure::Server), 1),
        ];
        assert_eq!(unserved(&failed), (MetricOutcome::Exhausted, 2));
    }

    #[test]
    fn served_logs_info_the_gateways_own_failure_error_and_every_other_ending_warn() {
        assert_eq!(level("served", 200), "info");
        assert_eq!(level("refusal_applied", 200), "info");
        assert_eq!(level("exhausted", 502), "warn");
        assert_eq!(level("rejected", 503), "warn");
        assert_eq!(level("limited", 429), "warn");
        assert_eq!(level("refused", 400), "warn");
        assert_eq!(level("rejected", 500), "error");
    }
}
