//! The one error vocabulary: everything the gateway refuses leaves as an OpenAI-shaped error.

use serde::Serialize;

/// The `type` field of an OpenAI error object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    InvalidRequestError,
    AuthenticationError,
    ApiError,
}

/// One entry of `attempts` in the aggregated 502: only the classification crosses this boundary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttemptSummary {
    pub provider: String,
    pub model: String,
    pub failure: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Which try of a candidate with same-candidate retries; absent otherwise (seed 000's shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
}

/// An error as the caller sees it: status plus the body fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub kind: ErrorType,
    /// The provider's own `type` when an upstream error is passed through unchanged.
    pub upstream_type: Option<String>,
    pub code: Option<String>,
    pub message: String,
    pub param: Option<String>,
    pub attempts: Option<Vec<AttemptSummary>>,
}

#[derive(Serialize)]
struct Envelope<'a> {
    error: Body<'a>,
}

#[derive(Serialize)]
struct Body<'a> {
    #[serde(rename = "type")]
    kind: TypeField<'a>,
    code: Option<&'a str>,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    param: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempts: Option<&'a [AttemptSummary]>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum TypeField<'a> {
    Ours(ErrorType),
    Theirs(&'a str),
}

impl ApiError {
    pub fn new(status: u16, kind: ErrorType, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            upstream_type: None,
            code: Some(code.to_owned()),
            message: message.into(),
            param: None,
            attempts: None,
        }
    }

    pub fn invalid_request(status: u16, code: &str, message: impl Into<String>) -> Self {
        Self::new(status, ErrorType::InvalidRequestError, code, message)
    }

    pub fn with_param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// A storage or runtime fault: the detail goes to the log, never to the caller.
    pub fn internal() -> Self {
        Self::new(
            500,
            ErrorType::ApiError,
            "internal_error",
            "The gateway could not complete the request.",
        )
    }

    pub fn not_found(what: &str) -> Self {
        Self::invalid_request(404, "not_found", format!("{what} was not found."))
    }

    pub fn method_not_allowed() -> Self {
        Self::invalid_request(
            405,
            "method_not_allowed",
            "Method not allowed on this path.",
        )
    }

    pub fn body_too_large(limit: usize) -> Self {
        Self::invalid_request(
            413,
            "body_too_large",
            format!("The request body exceeds the limit of {limit} bytes."),
        )
    }

    pub fn to_json(&self) -> String {
        let envelope = Envelope {
            error: Body {
                kind: match &self.upstream_type {
                    Some(theirs) => TypeField::Theirs(theirs),
                    None => TypeField::Ours(self.kind),
                },
                code: self.code.as_deref(),
                message: &self.message,
                param: self.param.as_deref(),
                attempts: self.attempts.as_deref(),
            },
        };
        // Serializing plain strings and numbers cannot fail; the fallback keeps the shape anyway.
        serde_json::to_string(&envelope).unwrap_or_else(|_| {
            r#"{"error":{"type":"api_error","code":"internal_error","message":"error"}}"#.to_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_leaves_in_openai_shape() {
        let body: serde_json::Value =
            serde_json::from_str(&ApiError::invalid_request(400, "bad", "nope").to_json())
                .unwrap_or_default();
        assert_eq!(
            body,
            serde_json::json!({"error":{"type":"invalid_request_error","code":"bad","message":"nope"}})
        );
    }

    #[test]
    fn upstream_type_is_kept_when_passed_through() {
        let mut err = ApiError::invalid_request(400, "x", "m");
        err.upstream_type = Some("content_policy_violation".into());
        assert!(err
            .to_json()
            .contains(r#""type":"content_policy_violation""#));
    }
}
