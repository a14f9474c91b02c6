//! The one `ApiError`, rendered in Anthropic's shape for the Messages surface:
//! `{"type":"error","error":{"type","message"}}`, statuses unchanged.

use crate::api::ApiError;
use serde_json::json;

const ANTHROPIC_TYPES: &[&str] = &[
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
    "rate_limit_error",
    "api_error",
    "overloaded_error",
];

/// Anthropic's error type for an error: a provider's own Anthropic type when it was passed
/// through, otherwise the one Anthropic uses for the status.
pub fn anthropic_type(err: &ApiError) -> &'static str {
    if let Some(theirs) = err.upstream_type() {
        if let Some(t) = ANTHROPIC_TYPES.iter().find(|t| **t == theirs) {
            return t;
        }
    }
    match err.status() {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        503 | 529 => "overloaded_error",
        400..=499 => "invalid_request_error",
        _ => "api_error",
    }
}

/// The body; the aggregated 502 keeps the spec's `attempts` inside `error`.
pub fn anthropic_json(err: &ApiError) -> String {
    let mut error = json!({"type": anthropic_type(err), "message": err.message()});
    if let Some(attempts) = err.attempts() {
        error["attempts"] = json!(attempts);
    }
    json!({"type": "error", "error": error}).to_string()
}

pub use crate::api::error::anthropic_event;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{AttemptSummary, ErrorKind, UpstreamFields};
    use serde_json::Value;

    #[test]
    fn each_status_gets_anthropics_error_type_in_anthropics_shape() {
        for (status, kind) in [
            (ErrorKind::InvalidType, "invalid_request_error"),
            (ErrorKind::InvalidApiKey, "authentication_error"),
            (ErrorKind::BudgetExceeded, "billing_error"),
            (ErrorKind::UpstreamRejected(403), "permission_error"),
            (ErrorKind::NotFound, "not_found_error"),
            (ErrorKind::UpstreamRejected(429), "rate_limit_error"),
            (ErrorKind::Internal, "api_error"),
            (ErrorKind::NoCandidates, "overloaded_error"),
        ] {
            let e = ApiError::new(status, "m");
            let v: Value = serde_json::from_str(&anthropic_json(&e)).unwrap();
            assert_eq!(
                v,
                json!({"type": "error", "error": {"type": kind, "message": "m"}})
            );
        }
    }

    #[test]
    fn the_aggregated_502_keeps_attempts_inside_error() {
        let e = ApiError::new(ErrorKind::UpstreamExhausted, "all failed").with_attempts(vec![
            AttemptSummary {
                provider: "p".into(),
                model: "m".into(),
                failure: "server",
                status: Some(500),
                retry: None,
            },
        ]);
        let v: Value = serde_json::from_str(&anthropic_json(&e)).unwrap();
        assert_eq!(v["error"]["type"], "api_error");
        assert_eq!(v["error"]["attempts"][0]["failure"], "server");
    }

    #[test]
    fn a_passed_through_anthropic_type_is_kept() {
        let theirs = |t: &str| UpstreamFields {
            error_type: Some(t.into()),
            code: None,
        };
        let e = ApiError::passthrough(400, "bad", theirs("overloaded_error"));
        assert_eq!(anthropic_type(&e), "overloaded_error");
        let e = ApiError::passthrough(400, "bad", theirs("content_policy_violation"));
        assert_eq!(anthropic_type(&e), "invalid_request_error");
    }
}
