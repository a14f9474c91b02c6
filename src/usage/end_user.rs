//! Who the caller says its end user is: `X-CogniGate-User`, else the request's `user` field.
//! Read before the cascade (limits may admit per end user) and kept on the usage record.

use crate::api::{ApiError, ChatRequest, ErrorKind};

/// End-user ids are cut to this many bytes (on a character boundary): enough for any id or
/// email a caller would send, short enough that records and roll-up keys stay small.
pub const MAX_END_USER_BYTES: usize = 128;

/// The header wins over the body; blank values count as absent; control characters are dropped.
pub fn end_user(header: Option<&str>, request: &ChatRequest) -> Option<String> {
    let from_body = || {
        request
            .raw("user")
            .and_then(|raw| serde_json::from_str::<String>(raw).ok())
    };
    let found = header
        .map(str::to_owned)
        .filter(|h| !h.trim().is_empty())
        .or_else(from_body)?;
    let clean: String = found.trim().chars().filter(|c| !c.is_control()).collect();
    let cut = crate::config::text::truncated(&clean, MAX_END_USER_BYTES);
    (!cut.is_empty()).then(|| cut.to_owned())
}

/// Settings `end_user.required`: a request that names no end user (after the cleaning above) is
/// refused with 400, `param: "user"`, before any upstream or ledger call, so nothing is counted.
pub fn require(required: bool, end_user: Option<&str>) -> Result<(), ApiError> {
    if !required || end_user.is_some() {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorKind::InvalidRequest,
        "This tenant requires an end user: send the X-CogniGate-User header or the request's \
         'user' field (on /v1/messages, 'metadata.user_id').",
    )
    .with_param("user"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(body: &str) -> ChatRequest {
        ChatRequest::parse(body.as_bytes()).unwrap()
    }

    #[test]
    fn the_end_user_header_wins_over_the_user_field() {
        let r = req(r#"{"model":"m","user":"from-body"}"#);
        assert_eq!(
            end_user(Some("from-header"), &r).as_deref(),
            Some("from-header")
        );
        assert_eq!(end_user(None, &r).as_deref(), Some("from-body"));
        assert_eq!(end_user(Some("  "), &r).as_deref(), Some("from-body"));
    }

    #[test]
    fn without_header_or_string_user_field_there_is_no_end_user() {
        assert_eq!(end_user(None, &req(r#"{"model":"m"}"#)), None);
        assert_eq!(end_user(None, &req(r#"{"model":"m","user":5}"#)), None);
        assert_eq!(end_user(None, &req(r#"{"model":"m","user":""}"#)), None);
    }

    #[test]
    fn a_required_end_user_refuses_a_request_without_one_with_400_param_user() {
        let blank = end_user(Some(" \u{7}  "), &req(r#"{"model":"m"}"#));
        let e = require(true, blank.as_deref()).unwrap_err();
        assert_eq!(e.status(), 400);
        assert_eq!(e.param(), Some("user"));
        let v: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(v["error"]["code"], "invalid_request");
        assert!(require(true, Some("alice")).is_ok());
        assert!(require(false, None).is_ok(), "not required: absent is fine");
    }

    #[test]
    fn an_end_user_id_is_cut_to_128_bytes_on_a_character_boundary() {
        let long = "é".repeat(100);
        let got = end_user(Some(&long), &req(r#"{"model":"m"}"#)).unwrap();
        assert_eq!(got.len(), MAX_END_USER_BYTES);
        assert!(long.starts_with(&got));
    }
}
