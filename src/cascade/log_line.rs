//! The one structured JSON log line per request. Keys appear only by id; the upstream's own error
//! text appears here and nowhere else.

use super::CandidateAttempt;
use serde_json::{json, Value};

pub struct RequestLog<'a> {
    /// Which caller API the request came in on (`chat_completions`, `messages`, ...).
    pub surface: &'a str,
    pub request_id: &'a str,
    pub tenant: &'a str,
    pub requested: &'a str,
    /// `served`, `refused`, `exhausted`, `cancelled` or `rejected` (refused before routing).
    pub outcome: &'a str,
    pub status: u16,
    pub attempts: &'a [CandidateAttempt],
    pub total_ms: u64,
    pub d1_queries: u32,
    pub durable_object_calls: u32,
}

const MAX_ERROR_CHARS: usize = 2_000;

/// Names (tenant, requested model) are cut to this many bytes in the log line, so a caller
/// cannot make one line arbitrarily long.
pub const MAX_NAME_BYTES: usize = 256;

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub fn truncated(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

impl RequestLog<'_> {
    pub fn to_json(&self) -> Value {
        let attempts: Vec<Value> = self
            .attempts
            .iter()
            .flat_map(|a| {
                let tries: Vec<Value> = a
                    .tries
                    .iter()
                    .map(|t| {
                        let mut v = json!({
                            "provider": a.provider,
                            "model": a.model,
                            "key_id": t.key_id,
                            "ms": t.ms,
                        });
                        // Absent rather than null: the line stays short on the common path.
                        if let Some(f) = t.failure {
                            v["failure"] = f.as_str().into();
                        }
                        if let Some(s) = t.status {
                            v["status"] = s.into();
                        }
                        if let Some(e) = &t.error {
                            v["error"] = e.chars().take(MAX_ERROR_CHARS).collect::<String>().into();
                        }
                        v
                    })
                    .collect();
                if tries.is_empty() {
                    // Skipped without a call: breaker open or budget spent.
                    vec![json!({"provider": a.provider, "model": a.model, "failure": a.failure.map(|f| f.as_str())})]
                } else {
                    tries
                }
            })
            .collect();
        json!({
            "msg": "request",
            "request_id": self.request_id,
            "surface": self.surface,
            "tenant": truncated(self.tenant, MAX_NAME_BYTES),
            "requested": truncated(self.requested, MAX_NAME_BYTES),
            "outcome": self.outcome,
            "status": self.status,
            "attempts": attempts,
            "total_ms": self.total_ms,
            "d1_queries": self.d1_queries,
            "durable_object_calls": self.durable_object_calls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cascade::{Failure, KeyTry};

    #[test]
    fn each_key_try_is_listed_with_its_key_id_and_upstream_text() {
        let attempts = [CandidateAttempt {
            provider: "p".into(),
            model: "m".into(),
            failure: Some(Failure::RateLimit),
            status: Some(429),
            tries: vec![KeyTry {
                key_id: "key_ab12".into(),
                status: Some(429),
                failure: Some(Failure::RateLimit),
                error: Some("quota".into()),
                ms: 3,
            }],
        }];
        let line = RequestLog {
            surface: "chat_completions",
            request_id: "req_1",
            tenant: "acme",
            requested: "fast",
            outcome: "exhausted",
            status: 502,
            attempts: &attempts,
            total_ms: 4,
            d1_queries: 0,
            durable_object_calls: 1,
        }
        .to_json();
        assert_eq!(line["attempts"][0]["key_id"], "key_ab12");
        assert_eq!(line["attempts"][0]["error"], "quota");
        assert_eq!(line["attempts"][0]["failure"], "rate_limit");
    }

    #[test]
    fn names_in_the_log_line_are_cut_to_256_bytes_on_a_character_boundary() {
        let long = "é".repeat(200);
        let line = RequestLog {
            surface: "chat_completions",
            request_id: "req_1",
            tenant: "acme",
            requested: &long,
            outcome: "rejected",
            status: 400,
            attempts: &[],
            total_ms: 0,
            d1_queries: 0,
            durable_object_calls: 0,
        }
        .to_json();
        let requested = line["requested"].as_str().unwrap();
        assert_eq!(requested.len(), MAX_NAME_BYTES);
        assert!(long.starts_with(requested));
        assert_eq!(truncated("abc", 2), "ab");
        assert_eq!(truncated("é", 1), "");
    }
}
