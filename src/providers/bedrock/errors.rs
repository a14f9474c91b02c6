//! What a Bedrock failure means for the cascade, read from the error's type, never its status:
//! Bedrock answers 400 for a `ValidationException` (the request's own fault) and for an
//! `ExpiredTokenException` (the key's), 424 for a model's stream error, and so on.

use crate::cascade::{classify_status, Failure, StatusClass};
use serde::Deserialize;

/// The error type from the `x-amzn-ErrorType` header or the body's `__type`, bare: cut at the
/// first `:` (the header appends `:http://internal.amazon.com/...`) and after the last `#`
/// (`com.amazon.coral.service#ThrottlingException`).
pub fn bare_type(raw: &str) -> &str {
    let head = raw.split(':').next().unwrap_or(raw);
    head.rsplit('#').next().unwrap_or(head).trim()
}

/// The class of a known error type (UpperCamel as in HTTP answers, or lowerCamel as in-stream
/// exceptions name it); `None` for a type not listed.
pub fn error_class(error_type: &str) -> Option<StatusClass> {
    let t = bare_type(error_type);
    let (first, rest) = t.split_at_checked(1)?;
    let is = |name: &str| {
        name.split_at_checked(1)
            .is_some_and(|(f, r)| f.eq_ignore_ascii_case(first) && r == rest)
    };
    let known = |names: &[&str]| names.iter().any(|n| is(n));
    Some(
        if known(&["ThrottlingException", "ServiceQuotaExceededException"]) {
            StatusClass::NextKey(Failure::RateLimit)
        } else if known(&[
            "ModelNotReadyException",
            "ServiceUnavailableException",
            "InternalServerException",
            "ModelErrorException",
            "ModelStreamErrorException",
            "CorruptFrame",
        ]) {
            StatusClass::NextCandidate(Failure::Server)
        } else if is("ModelTimeoutException") {
            StatusClass::NextCandidate(Failure::Timeout)
        } else if known(&[
            "AccessDeniedException",
            "UnrecognizedClientException",
            "InvalidSignatureException",
            "ExpiredTokenException",
            "MissingAuthenticationTokenException",
        ]) {
            StatusClass::NextKey(Failure::Auth)
        } else if is("ResourceNotFoundException") {
            StatusClass::NextCandidate(Failure::NotFound)
        } else if is("ValidationException") {
            StatusClass::RequestCaused
        } else {
            return None;
        },
    )
}

#[derive(Deserialize)]
struct ErrorBody<'a> {
    #[serde(rename = "__type", borrow)]
    error_type: Option<std::borrow::Cow<'a, str>>,
}

/// A non-2xx answer's class: by the `x-amzn-ErrorType` header, else the body's `__type`, else
/// (an unknown or absent type) by the status as for any provider.
pub fn classify(status: u16, amzn_error_type: Option<&str>, body: &str) -> StatusClass {
    if (200..300).contains(&status) {
        return StatusClass::Success;
    }
    let from_body = serde_json::from_str::<ErrorBody<'_>>(body)
        .ok()
        .and_then(|b| b.error_type);
    amzn_error_type
        .and_then(error_class)
        .or_else(|| from_body.as_deref().and_then(error_class))
        .unwrap_or_else(|| classify_status(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_type_maps_by_type_in_either_camel_case() {
        use Failure::*;
        use StatusClass::*;
        for (t, class) in [
            ("ThrottlingException", NextKey(RateLimit)),
            ("ServiceQuotaExceededException", NextKey(RateLimit)),
            ("ModelNotReadyException", NextCandidate(Server)),
            ("ServiceUnavailableException", NextCandidate(Server)),
            ("InternalServerException", NextCandidate(Server)),
            ("ModelErrorException", NextCandidate(Server)),
            ("ModelStreamErrorException", NextCandidate(Server)),
            ("CorruptFrame", NextCandidate(Server)),
            ("ModelTimeoutException", NextCandidate(Timeout)),
            ("AccessDeniedException", NextKey(Auth)),
            ("UnrecognizedClientException", NextKey(Auth)),
            ("InvalidSignatureException", NextKey(Auth)),
            ("ExpiredTokenException", NextKey(Auth)),
            ("MissingAuthenticationTokenException", NextKey(Auth)),
            ("ResourceNotFoundException", NextCandidate(NotFound)),
            ("ValidationException", RequestCaused),
        ] {
            assert_eq!(error_class(t), Some(class), "{t}");
            let lower = format!("{}{}", t[..1].to_ascii_lowercase(), &t[1..]);
            assert_eq!(error_class(&lower), Some(class), "{lower}");
        }
    }

    #[test]
    fn only_the_first_letters_case_is_free_and_unknown_types_are_none() {
        assert_eq!(error_class("THROTTLINGEXCEPTION"), None);
        assert_eq!(error_class("throttlingexception"), None);
        assert_eq!(error_class("SomethingNewException"), None);
        assert_eq!(error_class(""), None);
    }

    #[test]
    fn header_and_body_type_forms_are_cut_to_the_bare_name() {
        assert_eq!(
            bare_type("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
            "ThrottlingException"
        );
        assert_eq!(
            bare_type("com.amazon.coral.service#ExpiredTokenException"),
            "ExpiredTokenException"
        );
        assert_eq!(
            error_class("com.amazon.coral.validate#ValidationException"),
            Some(StatusClass::RequestCaused)
        );
    }

    #[test]
    fn the_type_decides_never_the_status() {
        assert_eq!(
            classify(400, Some("ExpiredTokenException:http://x/"), ""),
            StatusClass::NextKey(Failure::Auth)
        );
        assert_eq!(
            classify(
                400,
                None,
                r#"{"__type":"com.amazon.coral.service#ThrottlingException","message":"slow"}"#
            ),
            StatusClass::NextKey(Failure::RateLimit)
        );
        assert_eq!(
            classify(424, Some("ModelErrorException"), ""),
            StatusClass::NextCandidate(Failure::Server)
        );
        assert_eq!(
            classify(403, Some("ValidationException"), ""),
            StatusClass::RequestCaused
        );
    }

    #[test]
    fn the_header_is_read_before_the_body() {
        assert_eq!(
            classify(
                429,
                Some("ThrottlingException"),
                r#"{"__type":"ValidationException"}"#
            ),
            StatusClass::NextKey(Failure::RateLimit)
        );
        assert_eq!(
            classify(
                429,
                Some("NewException"),
                r#"{"__type":"ValidationException"}"#
            ),
            StatusClass::RequestCaused
        );
    }

    #[test]
    fn an_unknown_or_absent_type_falls_back_to_the_status() {
        assert_eq!(classify(429, None, "not json"), classify_status(429));
        assert_eq!(
            classify(503, Some("NewException"), "{}"),
            classify_status(503)
        );
        assert_eq!(
            classify(400, None, r#"{"message":"bad"}"#),
            StatusClass::RequestCaused
        );
        assert_eq!(
            classify(200, Some("ThrottlingException"), ""),
            StatusClass::Success
        );
    }
}
