//! The caller's chat-completions request, as far as routing needs to understand it.
//!
//! The body is kept as raw JSON text per top-level field: only the fields routing or translation
//! reads are checked, and a tree is built only where a translation needs one. The number of
//! values is bounded before anything is parsed (see `raw_json`).

use super::error::{ApiError, ErrorKind, UpstreamFields};
use super::raw_json::{self, MessagesShape};
use crate::config::SortedMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::ops::Range;

/// Fields OpenAI-compatible APIs put on assistant messages to carry reasoning (for
/// reasoning compatibility): checked here, stripped or converted by `providers::reasoning`.
pub const REASONING_FIELDS: &[&str] = &[
    "reasoning_content",
    "reasoning",
    "reasoning_details",
    "thinking_blocks",
];

/// Longer requested names are refused: no catalog name is this long, and names go to the log.
pub const MAX_MODEL_BYTES: usize = 256;

/// A parsed request body. Everything but `model` is passed upstream as the caller sent it.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub model: String,
    pub stream: bool,
    /// The body as sent (checked UTF-8 JSON); fields point into it, so it is held once.
    text: String,
    /// Top-level field → where its value's JSON text lies in `text`.
    fields: SortedMap<String, Range<usize>>,
    messages: MessagesShape,
}

impl PartialEq for ChatRequest {
    fn eq(&self, other: &Self) -> bool {
        self.model == other.model
            && self.stream == other.stream
            && self.messages == other.messages
            && self.fields().eq(other.fields())
    }
}

fn invalid_type(field: &str, what: &str) -> ApiError {
    ApiError::new(ErrorKind::InvalidType, format!("'{field}' must be {what}.")).with_param(field)
}

impl ChatRequest {
    /// Parses with the default bound on JSON values.
    pub fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        Self::parse_bounded(bytes.to_vec(), DEFAULT_MAX_JSON_VALUES)
    }

    /// Takes the body it parses, so the bytes are held once. Refuses a body with more than
    /// `max_values` JSON values before parsing any of it, so no translation ever builds a tree
    /// larger than that.
    pub fn parse_bounded(bytes: Vec<u8>, max_values: usize) -> Result<Self, ApiError> {
        Self::parse_with_default(bytes, max_values, None)
    }

    /// As `parse_bounded`; a body without `model` is served as `default_model` (the tenant's
    /// setting), and is refused with `missing_model` only when there is none.
    pub fn parse_with_default(
        bytes: Vec<u8>,
        max_values: usize,
        default_model: Option<&str>,
    ) -> Result<Self, ApiError> {
        let extent = raw_json::extent(&bytes);
        if extent.depth > raw_json::MAX_DEPTH {
            return Err(ApiError::new(
                ErrorKind::InvalidJson,
                format!(
                    "The request body is not valid JSON: nested deeper than {} levels.",
                    raw_json::MAX_DEPTH
                ),
            ));
        }
        if extent.values > max_values {
            return Err(ApiError::new(
                ErrorKind::TooManyValues,
                format!("The request body has more than {max_values} JSON values."),
            ));
        }
        let not_json = |e: &dyn std::fmt::Display| {
            ApiError::new(
                ErrorKind::InvalidJson,
                format!("The request body is not valid JSON: {e}"),
            )
        };
        let text = String::from_utf8(bytes).map_err(|e| not_json(&e))?;
        let fields = field_ranges(&text).map_err(|e| {
            // A body that is not an object stops at its first byte; whether it is JSON at all
            // is then checked without building anything.
            let valid_json = serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok();
            if e.is_data() && valid_json {
                ApiError::new(
                    ErrorKind::InvalidRequest,
                    "The request body must be a JSON object.",
                )
            } else {
                not_json(&e)
            }
        })?;
        let field = |name: &str| fields.get(name).map(|r| &text[r.clone()]);
        let model = match field("model").map(serde_json::from_str::<String>) {
            Some(Ok(m)) if m.len() > MAX_MODEL_BYTES => {
                return Err(ApiError::new(
                    ErrorKind::InvalidRequest,
                    format!("'model' must be at most {MAX_MODEL_BYTES} bytes."),
                )
                .with_param("model"))
            }
            Some(Ok(m)) if !m.is_empty() => m,
            Some(_) => return Err(invalid_type("model", "a non-empty string")),
            None => match default_model {
                Some(name) => name.to_owned(),
                None => {
                    return Err(
                        ApiError::new(ErrorKind::MissingModel, "'model' is required.")
                            .with_param("model"),
                    )
                }
            },
        };
        check_types(&field)?;
        let messages = match field("messages") {
            Some(raw) if raw != "null" => raw_json::check_messages(raw, REASONING_FIELDS)
                .ok_or_else(|| {
                    invalid_type(
                        "messages",
                        "an array of messages, each with a string 'role'",
                    )
                })?,
            _ => MessagesShape::default(),
        };
        let stream = match field("stream") {
            None | Some("null") => false,
            Some(raw) => serde_json::from_str::<bool>(raw)
                .map_err(|_| invalid_type("stream", "a boolean"))?,
        };
        Ok(Self {
            model,
            stream,
            text,
            fields,
            messages,
        })
    }

    /// A top-level field's JSON text as the caller sent it (`null` counts as absent).
    pub fn raw(&self, field: &str) -> Option<&str> {
        self.fields
            .get(field)
            .map(|r| &self.text[r.clone()])
            .filter(|raw| *raw != "null")
    }

    /// A top-level field parsed into a tree; for small fields and translations.
    pub fn value(&self, field: &str) -> Option<Value> {
        serde_json::from_str(self.raw(field)?).ok()
    }

    /// The size of the body as sent: what a rewritten upstream body needs, give or take a name.
    pub fn body_len(&self) -> usize {
        self.text.len()
    }

    /// Every top-level field's JSON text, in key order.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &str)> {
        self.fields
            .iter()
            .map(|(k, r)| (k.as_str(), &self.text[r.clone()]))
    }

    /// Some message carries reasoning fields that OpenAI-compatible targets refuse back.
    pub fn messages_have_reasoning(&self) -> bool {
        self.messages.has_reasoning
    }

    /// The body but `skip` as a tree, for a translation that rewrites it (bounded by the value
    /// count checked at parse).
    pub fn tree_without(&self, skip: &str) -> Map<String, Value> {
        self.fields
            .iter()
            .filter(|(k, _)| k.as_str() != skip)
            .filter_map(|(k, r)| {
                Some((k.clone(), serde_json::from_str(&self.text[r.clone()]).ok()?))
            })
            .collect()
    }
}

/// The default bound on JSON values in one chat body (`MAX_CHAT_JSON_VALUES`). A long agent
/// conversation with tools has a few thousand; text and images are single values whatever their
/// size.
pub const DEFAULT_MAX_JSON_VALUES: usize = 100_000;

/// The fields routing or translation reads must have the type OpenAI documents; anything else is
/// refused here with the field named, rather than failing obscurely upstream.
/// Where each top-level field's value lies in `text`: parsed with values borrowed from the text,
/// so nothing is copied but the keys.
fn field_ranges(text: &str) -> Result<SortedMap<String, Range<usize>>, serde_json::Error> {
    let borrowed: SortedMap<Cow<'_, str>, &RawValue> = serde_json::from_str(text)?;
    let base = text.as_ptr() as usize;
    Ok(borrowed
        .into_iter()
        .map(|(k, v)| {
            let start = v.get().as_ptr() as usize - base;
            (k.into_owned(), start..start + v.get().len())
        })
        .collect())
}

fn check_types<'a>(field: &impl Fn(&str) -> Option<&'a str>) -> Result<(), ApiError> {
    for (name, ok, what) in TYPE_CHECKS {
        match field(name) {
            None | Some("null") => {}
            Some(raw) if ok(raw) => {}
            Some(_) => return Err(invalid_type(name, what)),
        }
    }
    Ok(())
}

/// (field, accepts the raw JSON text, what it must be)
type TypeCheck = (&'static str, fn(&str) -> bool, &'static str);

const TYPE_CHECKS: &[TypeCheck] = &[
    ("max_tokens", is_count, "a non-negative integer"),
    ("max_completion_tokens", is_count, "a non-negative integer"),
    ("temperature", is_number, "a number"),
    ("top_p", is_number, "a number"),
    ("stop", is_stop, "a string or an array of strings"),
    ("tools", is_array, "an array"),
    ("stream_options", is_object, "an object"),
];

fn is_count(raw: &str) -> bool {
    serde_json::from_str::<u64>(raw).is_ok()
}

fn is_number(raw: &str) -> bool {
    serde_json::from_str::<f64>(raw).is_ok()
}

// Raw values come from serde_json, so the first byte decides the JSON type.
fn is_array(raw: &str) -> bool {
    raw.starts_with('[')
}

fn is_object(raw: &str) -> bool {
    raw.starts_with('{')
}

fn is_stop(raw: &str) -> bool {
    raw.starts_with('"')
        || serde_json::from_str::<Vec<&RawValue>>(raw)
            .is_ok_and(|a| a.iter().all(|s| s.get().starts_with('"')))
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
    let theirs = UpstreamFields {
        error_type: field("type"),
        code: field("code"),
    };
    let out = ApiError::passthrough(status, message, theirs);
    match field("param") {
        Some(p) => out.with_param(p),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_is_required() {
        let e = ChatRequest::parse(br#"{"messages":[]}"#).unwrap_err();
        assert_eq!(
            (e.status(), e.code(), e.param()),
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
            assert_eq!((e.status(), e.param()), (400, Some(field)), "{body}");
        }
        assert!(ChatRequest::parse(
            br#"{"model":"m","messages":[{"role":"user","content":"x"}],"stop":null}"#
        )
        .is_ok());
    }

    #[test]
    fn a_request_without_model_is_served_as_the_default_model_when_there_is_one() {
        let body = br#"{"messages":[{"role":"user","content":"x"}]}"#.to_vec();
        let r = ChatRequest::parse_with_default(body.clone(), 1_000, Some("fast")).unwrap();
        assert_eq!(r.model, "fast");
        let named = br#"{"model":"best"}"#.to_vec();
        let r = ChatRequest::parse_with_default(named, 1_000, Some("fast")).unwrap();
        assert_eq!(r.model, "best");
        let e = ChatRequest::parse_with_default(body, 1_000, None).unwrap_err();
        assert_eq!(e.code(), Some("missing_model"));
    }

    #[test]
    fn a_model_name_over_256_bytes_is_refused_with_the_param_named() {
        let long = "m".repeat(MAX_MODEL_BYTES + 1);
        let e = ChatRequest::parse(format!(r#"{{"model":"{long}"}}"#).as_bytes()).unwrap_err();
        assert_eq!(
            (e.status(), e.code(), e.param()),
            (400, Some("invalid_request"), Some("model"))
        );
        assert!(e.message().len() < 100, "a short message, not the name");
        let ok = "m".repeat(MAX_MODEL_BYTES);
        assert!(ChatRequest::parse(format!(r#"{{"model":"{ok}"}}"#).as_bytes()).is_ok());
    }

    #[test]
    fn a_body_with_more_values_than_the_bound_is_refused_before_parsing() {
        let pad = r#"{"a":0},"#.repeat(600);
        let body = format!(r#"{{"model":"m","pad":[{pad}{{}}]}}"#);
        let e = ChatRequest::parse_bounded(body.clone().into_bytes(), 1_000).unwrap_err();
        assert_eq!((e.status(), e.code()), (400, Some("too_many_values")));
        assert!(ChatRequest::parse_bounded(body.into_bytes(), 2_000).is_ok());
    }

    #[test]
    fn non_object_bodies_and_broken_json_get_their_own_codes() {
        let e = ChatRequest::parse(b"[1]").unwrap_err();
        assert_eq!(e.code(), Some("invalid_request"));
        let e = ChatRequest::parse(b"{\"model\":").unwrap_err();
        assert_eq!(e.code(), Some("invalid_json"));
        let too_deep = format!("{}{}", "[".repeat(1_000), "]".repeat(1_000));
        let e = ChatRequest::parse(too_deep.as_bytes()).unwrap_err();
        assert_eq!(e.code(), Some("invalid_json"));
    }

    #[test]
    fn wrong_type_names_the_field() {
        let e = ChatRequest::parse(br#"{"model":5}"#).unwrap_err();
        assert_eq!(e.param(), Some("model"));
        let e = ChatRequest::parse(br#"{"model":"m","stream":"yes"}"#).unwrap_err();
        assert_eq!(e.param(), Some("stream"));
    }

    #[test]
    fn provider_error_fields_are_kept() {
        let e = passthrough_error(
            400,
            r#"{"error":{"message":"Your request was rejected","type":"invalid_request_error","code":"content_policy_violation","param":null}}"#,
        );
        assert_eq!(e.status(), 400);
        assert_eq!(e.message(), "Your request was rejected");
        assert_eq!(e.upstream_type(), Some("invalid_request_error"));
        assert_eq!(e.code(), Some("content_policy_violation"));
    }

    #[test]
    fn unparsable_provider_error_gets_a_plain_message() {
        let e = passthrough_error(413, "<html>too big</html>");
        assert_eq!(
            e.message(),
            "The upstream provider rejected the request (HTTP 413)."
        );
        assert!(!e.to_json().contains("html"));
    }
}
