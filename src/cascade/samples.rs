//! What each attempt adds to the live stats: a sent attempt is one request, served or
//! failed; an attempt never sent (open breaker, used-up `rpm`, a window too small) is none.

use super::CandidateAttempt;
use crate::routing::stats::model_stats::Sample;
use crate::usage::{UsageRecord, UsageSource};

/// The tokens sample a request's usage record adds, with the provider and model it is of: only
/// a served answer whose usage the upstream reported (an estimate knows nothing of the prompt
/// cache, and a response-cache hit reached no upstream).
pub fn usage_sample(record: &UsageRecord) -> Option<(&str, &str, Sample)> {
    let tokens = record.tokens.filter(|t| t.prompt > 0)?;
    if record.usage_source != UsageSource::Reported || record.cache_hit {
        return None;
    }
    let sample = Sample::Tokens {
        prompt: tokens.prompt,
        cached: tokens.cached.min(tokens.prompt),
    };
    let provider = record.provider.as_ref()?.as_str();
    Some((provider, record.served_model.as_ref()?.as_str(), sample))
}

impl CandidateAttempt {
    /// This attempt's sample, if it reached the upstream. `streamed`: the answer is a stream, so
    /// its last try's time is its time to first byte and its total time comes at its end.
    pub fn sample(&self, streamed: bool) -> Option<Sample> {
        let last = self.tries.last()?;
        Some(match self.failure {
            None => Sample::Served {
                ttfb_ms: last.ms,
                latency_ms: (!streamed).then_some(last.ms),
            },
            Some(f) => Sample::Failed {
                counted: f.counts_toward_breaker(),
            },
        })
    }

    /// The sample the live stats record once the cascade ended (a stream: once it started):
    /// `headers_ms`, the served answer's request-to-headers time, is its time to first byte (a
    /// served try's own `ms` also holds its body read, or a stream's wait for its first event).
    pub fn ended_sample(&self, streamed: bool, headers_ms: Option<u64>) -> Option<Sample> {
        match (self.sample(streamed), headers_ms) {
            (Some(Sample::Served { latency_ms, .. }), Some(ttfb_ms)) => Some(Sample::Served {
                ttfb_ms,
                latency_ms,
            }),
            (sample, _) => sample,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cascade::{Failure, KeyTry};

    fn attempt(failure: Option<Failure>, tries: usize) -> CandidateAttempt {
        CandidateAttempt {
            provider: "p".into(),
            model: "m".into(),
            failure,
            status: None,
            tries: (0..tries)
                .map(|i| KeyTry {
                    at: 0,
                    key_id: format!("k{i}"),
                    status: None,
                    failure: None,
                    error: None,
                    ms: 40,
                })
                .collect(),
            retry: None,
            ends_at: None,
            truncated: None,
            refusal: false,
        }
    }

    #[test]
    fn an_attempt_never_sent_is_no_request() {
        assert_eq!(attempt(Some(Failure::BreakerOpen), 0).sample(false), None);
    }

    #[test]
    fn a_served_stream_counts_its_time_to_first_byte_and_leaves_its_total_for_its_end() {
        assert_eq!(
            attempt(None, 1).sample(true),
            Some(Sample::Served {
                ttfb_ms: 40,
                latency_ms: None
            })
        );
        assert_eq!(
            attempt(None, 1).sample(false),
            Some(Sample::Served {
                ttfb_ms: 40,
                latency_ms: Some(40)
            })
        );
    }

    #[test]
    fn only_a_failure_that_counts_toward_the_breaker_is_a_counted_failure() {
        assert_eq!(
            attempt(Some(Failure::Server), 2).sample(false),
            Some(Sample::Failed { counted: true })
        );
        assert_eq!(
            attempt(Some(Failure::RateLimit), 1).sample(false),
            Some(Sample::Failed { counted: false })
        );
    }

    #[test]
    fn a_served_answers_time_to_first_byte_is_its_time_to_headers_when_known() {
        let served = |ttfb_ms, latency_ms| {
            Some(Sample::Served {
                ttfb_ms,
                latency_ms,
            })
        };
        assert_eq!(
            attempt(None, 1).ended_sample(false, Some(7)),
            served(7, Some(40))
        );
        assert_eq!(
            attempt(None, 1).ended_sample(true, Some(7)),
            served(7, None)
        );
        assert_eq!(
            attempt(None, 1).ended_sample(false, None),
            served(40, Some(40))
        );
        let failed = attempt(Some(Failure::Server), 1).ended_sample(false, Some(7));
        assert_eq!(failed, Some(Sample::Failed { counted: true }));
    }

    /// A usage record as the ledger reads it, edited by `edit`.
    fn usage(edit: impl FnOnce(&mut serde_json::Value)) -> UsageRecord {
        let mut v = serde_json::json!({"at_ms": 0, "tenant": "acme", "key_id": "key_1",
            "end_user": null, "requested": "fast", "served_model": "m", "provider": "p",
            "tokens": {"prompt": 1000, "completion": 10, "cached": 800}, "cost_usd": 0.0,
            "outcome": "served"});
        edit(&mut v);
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_served_answers_reported_usage_adds_its_prompt_and_cached_tokens_to_its_model() {
        let record = usage(|_| {});
        let (provider, model, sample) = usage_sample(&record).unwrap();
        assert_eq!((provider, model), ("p", "m"));
        let tokens = Sample::Tokens {
            prompt: 1000,
            cached: 800,
        };
        assert_eq!(sample, tokens);
    }

    #[test]
    fn estimated_usage_a_cache_hit_or_an_unserved_request_adds_no_tokens() {
        let none = |edit: fn(&mut serde_json::Value)| usage_sample(&usage(edit)).is_none();
        assert!(none(|v| v["usage_source"] = "estimated".into()));
        assert!(none(|v| v["cache_hit"] = true.into()));
        assert!(none(|v| v["served_model"] = serde_json::Value::Null));
        assert!(none(|v| v["tokens"] = serde_json::Value::Null));
        assert!(none(|v| v["tokens"]["prompt"] = 0.into()));
        let capped = usage(|v| v["tokens"]["cached"] = 5000.into());
        let (_, _, sample) = usage_sample(&capped).unwrap();
        assert_eq!(
            sample,
            Sample::Tokens {
                prompt: 1000,
                cached: 1000
            },
            "never more cached than prompt tokens"
        );
    }
}
