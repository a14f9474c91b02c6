//! The caller's chat-completions request, as far as routing needs to understand it.

use super::error::ApiError;
use serde_json::{Map, Value};

/// A parsed request body. Everything but `model` is passed upstream as the caller sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub stream: bool,
    body: Map<String, Value>,
}

impl ChatRequest {
    pub fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            ApiError::invalid_request(
                400,
                "invalid_json",
                format!("The request body is not valid JSON: {e}"),
            )
        })?;
        let Value::Object(body) = value else {
            return Err(ApiError::invalid_request(
                400,
                "invalid_request",
                "The request body must be a JSON object.",
            ));
        };
        let model = match body.get("model") {
            Some(Value::String(m)) if !m.is_empty() => m.clone(),
            Some(_) => {
                return Err(ApiError::invalid_request(
                    400,
                    "invalid_type",
                    "'model' must be a non-empty string.",
                )
                .with_param("model"))
            }
            None => {
                return Err(
                    ApiError::invalid_request(400, "missing_model", "'model' is required.")
                        .with_param("model"),
                )
            }
        };
        check_types(&body)?;
        let stream = match body.get("stream") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(ApiError::invalid_request(
                    400,
                    "invalid_type",
                    "'stream' must be a boolean.",
                )
                .with_param("stream"))
            }
        };
        Ok(Self {
            model,
            stream,
            body,
        })
    }

    /// The caller's body as sent; providers build each attempt's body from it.
    pub fn body(&self) -> &Map<String, Value> {
        &self.body
    }
}

/// The fields routing or translation reads must have the type OpenAI documents; anything else is
/// refused here with the field named, rather than failing obscurely upstream.
fn check_types(body: &Map<String, Value>) -> Result<(), ApiError> {
    for (field, ok, what) in TYPE_CHECKS {
        match body.get(*field) {
            None | Some(Value::Null) => {}
            Some(v) if ok(v) => {}
            Some(_) => {
                return Err(ApiError::invalid_request(
                    400,
                    "invalid_type",
                    format!("'{field}' must be {what}."),
                )
                .with_param(*field))
            }
        }
    }
    Ok(())
}

/// (field, accepts, what it must be)
type TypeCheck = (&'static str, fn(&Value) -> bool, &'static str);

const TYPE_CHECKS: &[TypeCheck] = &[
    (
        "messages",
        is_messages,
        "an array of messages, each with a string 'role'",
    ),
    ("max_tokens", is_count, "a non-negative integer"),
    ("max_completion_tokens", is_count, "a non-negative integer"),
    ("temperature", Value::is_number, "a number"),
    ("top_p", Value::is_number, "a number"),
    ("stop", is_stop, "a string or an array of strings"),
    ("tools", Value::is_array, "an array"),
    ("stream_options", Value::is_object, "an object"),
];

fn is_count(v: &Value) -> bool {
    v.as_u64().is_some()
}

fn is_stop(v: &Value) -> bool {
    v.is_string() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
}

fn is_messages(v: &Value) -> bool {
    v.as_array().is_some_and(|a| {
        a.iter()
            .all(|m| m.get("role").is_some_and(Value::is_string))
    })
}

/// The provider's own error for a request-caused 4xx, in OpenAI shape. The provider's `type`,
/// `code`, `param` and message are kept where it gave them.
pub fn passthrough_error(status: u16, upstream_text: &str) -> ApiError {
    let parsed: Option<Value> = serde_json::from_str(upstream_text).ok();
    let err = parsed.as_ref().and_then(|v| v.get("error"));
    let field = |name: &str| {
        err.and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let message = field("message")
        .or_else(|| err.and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| format!("The upstream provider rejected the request (HTTP {status})."));
    let mut out = ApiError::invalid_request(status, "upstream_rejected", message);
    out.upstream_type = field("type");
    out.code = field("code");
    out.param = field("param");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_is_required() {
        let e = ChatRequest::parse(br#"{"messages":[]}"#).unwrap_err();
        assert_eq!(
            (e.status, e.code.as_deref(), e.param.as_deref()),
            (400, Some("missing_model"), Some("model"))
        );
    }

    #[test]
    fn wrong_types_of_translated_fields_are_named() {
        for (body, field) in [
            (r#"{"model":"m","messages":"hi"}"#, "messages"),
            (
                r#"{"model":"m","messages":[{"content":"no role"}]}"#,
                "messages",
            ),
            (r#"{"model":"m","max_tokens":-1}"#, "max_tokens"),
            (r#"{"model":"m","temperature":"hot"}"#, "temperature"),
            (r#"{"model":"m","stop":[1]}"#, "stop"),
            (r#"{"model":"m","tools":{}}"#, "tools"),
        ] {
            let e = ChatRequest::parse(body.as_bytes()).unwrap_err();
            assert_eq!((e.status, e.param.as_deref()), (400, Some(field)), "{body}");
        }
        assert!(ChatRequest::parse(
            br#"{"model":"m","messages":[{"role":"user","content":"x"}],"stop":null}"#
        )
        .is_ok());
    }

    #[test]
    fn wrong_type_names_the_field() {
        let e = ChatRequest::parse(br#"{"model":5}"#).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("model"));
        let e = ChatRequest::parse(br#"{"model":"m","stream":"yes"}"#).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("stream"));
    }

    #[test]
    fn provider_error_fields_are_kept() {
        let e = passthrough_error(
            400,
            r#"{"error":{"message":"Your request was rejected","type":"invalid_request_error","code":"content_policy_violation","param":null}}"#,
        );
        assert_eq!(e.status, 400);
        assert_eq!(e.message, "Your request was rejected");
        assert_eq!(e.upstream_type.as_deref(), Some("invalid_request_error"));
        assert_eq!(e.code.as_deref(), Some("content_policy_violation"));
    }

    #[test]
    fn unparsable_provider_error_gets_a_plain_message() {
        let e = passthrough_error(413, "<html>too big</html>");
        assert_eq!(
            e.message,
            "The upstream provider rejected the request (HTTP 413)."
        );
        assert!(!e.to_json().contains("html"));
    }
}
