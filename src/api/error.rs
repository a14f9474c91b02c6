//! The one error vocabulary: everything the gateway refuses leaves as an OpenAI-shaped error
//! (the Messages surface renders the same error in Anthropic's shape). An error's kind decides
//! its status, `type` and `code` in one `match`; only an upstream's 4xx passed through keeps the
//! provider's own status, type and code.

use serde::Serialize;

/// The `type` field of an OpenAI error object.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    InvalidRequestError,
    AuthenticationError,
    PermissionError,
    RateLimitError,
    ApiError,
    /// 402: a budget is spent (OpenAI's type for a spent quota).
    InsufficientQuota,
}

/// Every refusal the gateway makes, by what went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A body or query value that breaks a rule (the message and `param` name the field).
    InvalidRequest,
    InvalidBody,
    InvalidJson,
    InvalidType,
    TooManyValues,
    InvalidPath,
    MissingModel,
    MissingMaxTokens,
    MissingInput,
    UnsupportedParameter,
    UnsupportedTool,
    InvalidApiKey,
    InvalidAdminKey,
    NotFound,
    ModelNotFound,
    MethodNotAllowed,
    Conflict,
    BodyTooLarge,
    /// The caller went away before the answer (nginx's 499; only the log line sees it).
    ClientClosedRequest,
    Internal,
    UpstreamExhausted,
    /// The upstream stream failed after it had started: the final event of a cut stream.
    UpstreamStreamError,
    NoCandidates,
    /// `auto:<x>` naming neither a strategy nor a routing rule.
    UnknownChain,
    /// `X-CogniGate-Pin-Provider` naming a provider the tenant does not have.
    UnknownProvider,
    /// `X-CogniGate-Pin-Platform` naming no platform.
    UnknownPlatform,
    /// The key's `models` does not list the requested name.
    ModelNotAllowed,
    /// A pin asks for providers outside a data restriction the request matches.
    Restricted,
    /// The key's budget for the current period is spent.
    BudgetExceeded,
    TenantBudgetExceeded,
    EndUserBudgetExceeded,
    /// The gateway's own `rpm` / `tpm` limits (the answer carries `Retry-After`).
    RateLimitExceeded,
    /// A request-caused upstream 4xx, passed through with the upstream's status.
    UpstreamRejected(u16),
}

impl ErrorKind {
    /// Status, `type` and `code`: the whole vocabulary in one place.
    pub fn parts(self) -> (u16, ErrorType, &'static str) {
        use ErrorType::InsufficientQuota as Quota;
        use ErrorType::{ApiError as Api, AuthenticationError as Auth, InvalidRequestError as Bad};
        match self {
            Self::InvalidRequest => (400, Bad, "invalid_request"),
            Self::InvalidBody => (400, Bad, "invalid_body"),
            Self::InvalidJson => (400, Bad, "invalid_json"),
            Self::InvalidType => (400, Bad, "invalid_type"),
            Self::TooManyValues => (400, Bad, "too_many_values"),
            Self::InvalidPath => (400, Bad, "invalid_path"),
            Self::MissingModel => (400, Bad, "missing_model"),
            Self::MissingMaxTokens => (400, Bad, "missing_max_tokens"),
            Self::MissingInput => (400, Bad, "missing_input"),
            Self::UnsupportedParameter => (400, Bad, "unsupported_parameter"),
            Self::UnsupportedTool => (400, Bad, "unsupported_tool"),
            Self::InvalidApiKey => (401, Auth, "invalid_api_key"),
            Self::InvalidAdminKey => (401, Auth, "invalid_admin_key"),
            Self::NotFound => (404, Bad, "not_found"),
            Self::ModelNotFound => (404, Bad, "model_not_found"),
            Self::MethodNotAllowed => (405, Bad, "method_not_allowed"),
            Self::Conflict => (409, Bad, "conflict"),
            Self::BodyTooLarge => (413, Bad, "body_too_large"),
            Self::ClientClosedRequest => (499, Bad, "client_closed_request"),
            Self::Internal => (500, Api, "internal_error"),
            Self::UpstreamExhausted => (502, Api, "upstream_exhausted"),
            Self::UpstreamStreamError => (502, Api, "upstream_stream_error"),
            Self::NoCandidates => (503, Api, "no_candidates"),
            Self::UnknownChain => (400, Bad, "unknown_chain"),
            Self::UnknownProvider => (400, Bad, "unknown_provider"),
            Self::UnknownPlatform => (400, Bad, "unknown_platform"),
            Self::ModelNotAllowed => (403, ErrorType::PermissionError, "model_not_allowed"),
            Self::Restricted => (403, ErrorType::PermissionError, "restricted"),
            Self::BudgetExceeded => (402, Quota, "budget_exceeded"),
            Self::TenantBudgetExceeded => (402, Quota, "tenant_budget_exceeded"),
            Self::EndUserBudgetExceeded => (402, Quota, "end_user_budget_exceeded"),
            Self::RateLimitExceeded => (429, ErrorType::RateLimitError, "rate_limit_exceeded"),
            Self::UpstreamRejected(status) => (status, Bad, "upstream_rejected"),
        }
    }
}

/// One entry of `attempts` in the aggregated 502: only the classification crosses this boundary.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttemptSummary {
    pub provider: String,
    pub model: String,
    pub failure: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Which try of a candidate with same-candidate retries; absent otherwise (the spec's shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
}

/// What a provider said about its own 4xx, kept when it is passed through.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpstreamFields {
    pub error_type: Option<String>,
    pub code: Option<String>,
}

/// An error as the caller sees it. Built with a kind and a message; the rest is optional.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    kind: ErrorKind,
    message: String,
    param: Option<String>,
    attempts: Option<Vec<AttemptSummary>>,
    upstream: Option<UpstreamFields>,
}

/// The error body every admin and OpenAI-surface refusal carries (the OpenAPI document's `Error`).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Serialize)]
pub(crate) struct Envelope<'a> {
    error: Body<'a>,
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
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

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Serialize)]
#[serde(untagged)]
enum TypeField<'a> {
    Ours(ErrorType),
    Theirs(&'a str),
}

impl ApiError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            param: None,
            attempts: None,
            upstream: None,
        }
    }

    pub fn with_param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    pub fn with_attempts(mut self, attempts: Vec<AttemptSummary>) -> Self {
        self.attempts = Some(attempts);
        self
    }

    /// A provider's own 4xx, its type and code kept.
    pub fn passthrough(status: u16, message: impl Into<String>, theirs: UpstreamFields) -> Self {
        let mut err = Self::new(ErrorKind::UpstreamRejected(status), message);
        err.upstream = Some(theirs);
        err
    }

    /// A storage or runtime fault: the detail goes to the log, never to the caller.
    pub fn internal() -> Self {
        Self::new(
            ErrorKind::Internal,
            "The gateway could not complete the request.",
        )
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorKind::NotFound, format!("{what} was not found."))
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            ErrorKind::MethodNotAllowed,
            "Method not allowed on this path.",
        )
    }

    pub fn body_too_large(limit: usize) -> Self {
        Self::new(
            ErrorKind::BodyTooLarge,
            format!("The request body exceeds the limit of {limit} bytes."),
        )
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn status(&self) -> u16 {
        self.kind.parts().0
    }

    /// The `code` field: ours, or the provider's (possibly none) when passed through.
    pub fn code(&self) -> Option<&str> {
        match &self.upstream {
            Some(theirs) => theirs.code.as_deref(),
            None => Some(self.kind.parts().2),
        }
    }

    /// The provider's own `type` when its error was passed through.
    pub fn upstream_type(&self) -> Option<&str> {
        self.upstream.as_ref()?.error_type.as_deref()
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn param(&self) -> Option<&str> {
        self.param.as_deref()
    }

    pub fn attempts(&self) -> Option<&[AttemptSummary]> {
        self.attempts.as_deref()
    }

    pub fn to_json(&self) -> String {
        let envelope = Envelope {
            error: Body {
                kind: match self.upstream_type() {
                    Some(theirs) => TypeField::Theirs(theirs),
                    None => TypeField::Ours(self.kind.parts().1),
                },
                code: self.code(),
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

    /// The error as the final `data:` event of an OpenAI-shaped stream.
    pub fn to_sse_event(&self) -> Vec<u8> {
        format!("data: {}\n\n", self.to_json()).into_bytes()
    }
}

/// An error as the final event of a Messages stream (Anthropic's shape; the surface maps the
/// kind, this only frames it).
pub fn anthropic_event(kind: &str, message: &str) -> Vec<u8> {
    let data = serde_json::json!({"type": "error", "error": {"type": kind, "message": message}});
    format!("event: error\ndata: {data}\n\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_leaves_in_openai_shape() {
        let body: serde_json::Value =
            serde_json::from_str(&ApiError::new(ErrorKind::InvalidType, "nope").to_json())
                .unwrap_or_default();
        assert_eq!(
            body,
            serde_json::json!({"error":{"type":"invalid_request_error","code":"invalid_type","message":"nope"}})
        );
    }

    #[test]
    fn the_kind_decides_status_type_and_code() {
        let e = ApiError::new(ErrorKind::UpstreamExhausted, "all failed");
        assert_eq!((e.status(), e.code()), (502, Some("upstream_exhausted")));
        assert!(e.to_json().contains(r#""type":"api_error""#));
        let e = ApiError::new(ErrorKind::InvalidApiKey, "no");
        assert_eq!(e.status(), 401);
        assert!(e.to_json().contains(r#""type":"authentication_error""#));
    }

    #[test]
    fn upstream_type_and_code_are_kept_when_passed_through() {
        let theirs = UpstreamFields {
            error_type: Some("content_policy_violation".into()),
            code: None,
        };
        let err = ApiError::passthrough(422, "m", theirs);
        assert_eq!((err.status(), err.code()), (422, None));
        assert!(err
            .to_json()
            .contains(r#""type":"content_policy_violation""#));
    }
}
