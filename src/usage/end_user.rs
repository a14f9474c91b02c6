//! Who the caller says its end user is: `X-CogniGate-User`, else the request's `user` field.
//! Read before the cascade (limits may admit per end user) and kept on the usage record.

use crate::api::ChatRequest;

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
    fn an_end_user_id_is_cut_to_128_bytes_on_a_character_boundary() {
        let long = "é".repeat(100);
        let got = end_user(Some(&long), &req(r#"{"model":"m"}"#)).unwrap();
        assert_eq!(got.len(), MAX_END_USER_BYTES);
        assert!(long.starts_with(&got));
    }
}
