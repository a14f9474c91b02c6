//! The one structured JSON log line per request. Keys appear only by id; the upstream's own error
//! text appears here and nowhere else.

use crate::cascade::CandidateAttempt;
use crate::config::text::truncated;
use serde::Serialize;
use serde_json::Value;

pub struct RequestLog<'a> {
    /// Which caller API the request came in on (`chat_completions`, `messages`, ...).
    pub surface: &'a str,
    pub request_id: &'a str,
    pub tenant: &'a str,
    pub requested: &'a str,
    /// `params.task` and `params.agent` (`code`, `claude-code`, ...), when the request's facts
    /// detected them (a condition of the tenant reads them).
    pub task: Option<&'a str>,
    pub agent: Option<&'a str>,
    /// `served`, `refused`, `exhausted`, `cancelled` or `rejected` (refused before routing);
    /// `refusal_applied` or `refusal_unavailable` for an answer after a safety refusal.
    pub outcome: &'a str,
    pub status: u16,
    pub attempts: &'a [CandidateAttempt],
    pub total_ms: u64,
    pub d1_queries: u32,
    pub durable_object_calls: u32,
    /// The request's tokens and cost, when known as the line is written (a non-streamed answer;
    /// a stream's are in its `usage` line when it settles).
    pub usage: Option<LogUsage>,
}

/// `usage` of the line: absent when unknown.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LogUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl LogUsage {
    /// From a usage record's tokens and cost: `None` when its tokens are unknown.
    pub fn of(tokens: Option<crate::usage::TokenCounts>, cost_usd: Option<f64>) -> Option<Self> {
        tokens.map(|t| Self {
            prompt_tokens: t.prompt,
            completion_tokens: t.completion,
            cost_usd,
        })
    }
}

/// The upstream's error text is cut to this many bytes (on a character boundary).
const MAX_ERROR_BYTES: usize = 2_000;

/// Names (tenant, requested model) are cut to this many bytes in the log line, so a caller
/// cannot make one line arbitrarily long.
pub const MAX_NAME_BYTES: usize = 256;

/// The line as written: serialised straight from borrowed fields, with no JSON tree built in
/// between (the line is written for every request).
#[derive(Serialize)]
struct Line<'a> {
    msg: &'static str,
    /// `info` served (a cache hit too), `warn` not served, `error` the gateway's own failure
    /// (`metric::level`).
    level: &'static str,
    request_id: &'a str,
    surface: &'a str,
    tenant: &'a str,
    requested: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a str>,
    outcome: &'a str,
    status: u16,
    attempts: Vec<TryLine<'a>>,
    total_ms: u64,
    d1_queries: u32,
    durable_object_calls: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<LogUsage>,
}

/// One key tried, or one candidate skipped without a call (then no key and no time). Absent
/// rather than null: the line stays short on the common path.
#[derive(Serialize)]
struct TryLine<'a> {
    provider: &'a str,
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<usize>,
    /// This try's answer was a safety refusal (`on_refusal: fallback`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    refusal: bool,
}

impl RequestLog<'_> {
    fn line(&self) -> Line<'_> {
        let attempts = self
            .attempts
            .iter()
            .flat_map(|a| {
                let skipped = a.tries.is_empty().then(|| TryLine {
                    provider: &a.provider,
                    model: &a.model,
                    key_id: None,
                    ms: None,
                    // Skipped without a call: breaker open, budget spent, `rpm` used up, or a
                    // context window too small.
                    failure: a.failure.map(|f| f.as_str()),
                    status: None,
                    error: None,
                    retry: None,
                    truncated: None,
                    refusal: false,
                });
                a.tries
                    .iter()
                    .map(move |t| TryLine {
                        provider: &a.provider,
                        model: &a.model,
                        key_id: Some(&t.key_id),
                        ms: Some(t.ms),
                        failure: t.failure.map(|f| f.as_str()),
                        status: t.status,
                        error: t.error.as_deref().map(|e| truncated(e, MAX_ERROR_BYTES)),
                        retry: a.retry,
                        truncated: a.truncated,
                        // The answering try, the last of its attempt.
                        refusal: a.refusal && t.failure.is_none(),
                    })
                    .chain(skipped)
            })
            .collect();
        Line {
            msg: "request",
            level: crate::metrics::request_metric::level(self.outcome, self.status),
            request_id: self.request_id,
            surface: self.surface,
            tenant: truncated(self.tenant, MAX_NAME_BYTES),
            requested: truncated(self.requested, MAX_NAME_BYTES),
            task: self.task,
            agent: self.agent,
            outcome: self.outcome,
            status: self.status,
            attempts,
            total_ms: self.total_ms,
            d1_queries: self.d1_queries,
            durable_object_calls: self.durable_object_calls,
            usage: self.usage,
        }
    }

    /// The line as logged.
    pub fn to_line(&self) -> String {
        serde_json::to_string(&self.line()).unwrap_or_default()
    }

    /// The line as a JSON value, for tests and tools.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.line()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cascade::{Failure, KeyTry};

    /// The line for these attempts, with fixed ids, for the assertions below.
    fn line_of(
        requested: &str,
        outcome: &str,
        status: u16,
        attempts: &[CandidateAttempt],
    ) -> Value {
        RequestLog {
            surface: "chat_completions",
            request_id: "req_1",
            tenant: "acme",
            requested,
            task: None,
            agent: None,
            outcome,
            status,
            attempts,
            total_ms: 4,
            d1_queries: 0,
            durable_object_calls: 1,
            usage: None,
        }
        .to_json()
    }

    #[test]
    fn each_key_try_is_listed_with_its_key_id_and_upstream_text() {
        let attempts = [CandidateAttempt {
            provider: "p".into(),
            model: "m".into(),
            failure: Some(Failure::RateLimit),
            status: Some(429),
            tries: vec![KeyTry {
                at: 0,
                key_id: "key_ab12".into(),
                status: Some(429),
                failure: Some(Failure::RateLimit),
                error: Some("quota".into()),
                ms: 3,
            }],
            retry: None,
            ends_at: None,
            truncated: None,
            refusal: false,
        }];
        let line = line_of("fast", "exhausted", 502, &attempts);
        assert_eq!(line["attempts"][0]["key_id"], "key_ab12");
        assert_eq!(line["attempts"][0]["error"], "quota");
        assert_eq!(line["attempts"][0]["failure"], "rate_limit");
        assert!(
            line["attempts"][0].get("retry").is_none(),
            "an attempt that was not a retry has no retry field"
        );
    }

    #[test]
    fn a_retried_try_carries_its_retry_index_in_the_log_line() {
        let attempts = [CandidateAttempt {
            provider: "p".into(),
            model: "m".into(),
            failure: Some(Failure::Server),
            status: Some(503),
            tries: vec![KeyTry {
                at: 0,
                key_id: "key_ab12".into(),
                status: Some(503),
                failure: Some(Failure::Server),
                error: None,
                ms: 3,
            }],
            retry: Some(2),
            ends_at: None,
            truncated: None,
            refusal: false,
        }];
        let line = line_of("m", "exhausted", 502, &attempts);
        assert_eq!(line["attempts"][0]["retry"], 2);
    }

    #[test]
    fn a_refused_answer_is_marked_in_the_log_line_and_other_tries_are_not() {
        let attempt = |model: &str, refusal: bool| CandidateAttempt {
            provider: "p".into(),
            model: model.into(),
            failure: None,
            status: Some(200),
            tries: vec![KeyTry {
                at: 0,
                key_id: "key_ab12".into(),
                status: Some(200),
                failure: None,
                error: None,
                ms: 3,
            }],
            retry: None,
            ends_at: None,
            truncated: None,
            refusal,
        };
        let attempts = [attempt("m1", true), attempt("m2", false)];
        let line = line_of("best", "refusal_applied", 200, &attempts);
        assert_eq!(line["outcome"], "refusal_applied");
        assert_eq!(line["attempts"][0]["refusal"], true);
        assert!(line["attempts"][1].get("refusal").is_none(), "{line}");
        assert!(
            line["attempts"][0].get("failure").is_none(),
            "a refusal is no failure"
        );
    }

    #[test]
    fn the_log_line_has_a_level_and_its_usage_when_known() {
        let line = line_of("m", "served", 200, &[]);
        assert_eq!(line["level"], "info");
        assert!(line.get("usage").is_none(), "unknown usage is absent");
        assert_eq!(line_of("m", "exhausted", 502, &[])["level"], "warn");
        let with = RequestLog {
            usage: Some(LogUsage {
                prompt_tokens: 12,
                completion_tokens: 3,
                cost_usd: Some(0.001),
            }),
            ..served_log()
        }
        .to_json();
        assert_eq!(with["usage"]["prompt_tokens"], 12);
        assert_eq!(with["usage"]["completion_tokens"], 3);
        assert_eq!(with["usage"]["cost_usd"], 0.001);
    }

    /// A served request's line, with a task and an agent detected and no usage.
    fn served_log() -> RequestLog<'static> {
        RequestLog {
            surface: "chat_completions",
            request_id: "req_1",
            tenant: "acme",
            requested: "m",
            task: Some("code"),
            agent: Some("claude-code"),
            outcome: "served",
            status: 200,
            attempts: &[],
            total_ms: 4,
            d1_queries: 0,
            durable_object_calls: 0,
            usage: None,
        }
    }

    #[test]
    fn the_log_line_carries_the_task_and_agent_when_detected_and_omits_them_otherwise() {
        let mut log = RequestLog {
            requested: "work",
            ..served_log()
        };
        let line = log.to_line();
        assert!(
            line.contains(r#""requested":"work","task":"code","agent":"claude-code","outcome""#),
            "{line}"
        );
        (log.task, log.agent) = (None, None);
        let line = log.to_json();
        assert!(
            line.get("task").is_none() && line.get("agent").is_none(),
            "{line}"
        );
    }

    #[test]
    fn names_in_the_log_line_are_cut_to_256_bytes_on_a_character_boundary() {
        let long = "é".repeat(200);
        let line = line_of(&long, "rejected", 400, &[]);
        let requested = line["requested"].as_str().unwrap();
        assert_eq!(requested.len(), MAX_NAME_BYTES);
        assert!(long.starts_with(requested));
        assert_eq!(truncated("abc", 2), "ab");
        assert_eq!(truncated("é", 1), "");
    }
}
