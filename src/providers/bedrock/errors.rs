//! What a Bedrock failure means for the cascade, read from the error's type, never its status:
//! Bedrock answers 400 for a `ValidationException` (the request's own fault) and for an
//! `ExpiredTokenException` (the key's), 424 for a model's stream error, and so on.
//!
//! An unknown or absent type is classified by the status, as for any provider.

use serde::Deserialize;

pub use crate::providers::ErrorClass;

/// The error type from the `x-amzn-ErrorType` header or the body's `__type`, bare: cut at the
/// first `:` (the header appends `:http://internal.amazon.com/...`) and after the last `#`
/// (`com.amazon.coral.service#ThrottlingException`).
pub fn bare_type(raw: &str) -> &str {
    let head = raw.split(':').next().unwrap_or(raw);
    head.rsplit('#').next().unwrap_or(head).trim()
}

/// The class of a known error type (UpperCamel as in HTTP answers, or lowerCamel as in-stream
/// exceptions name it); `None` for a type not listed.
pub fn error_class(error_type: &str) -> Option<ErrorClass> {
    let t = bare_type(error_type);
    let (first, rest) = t.split_at_checked(1)?;
    let is = |name: &str| {
        name.split_at_checked(1)
            .is_some_and(|(f, r)| f.eq_ignore_ascii_case(first) && r == rest)
    };
    let known = |names: &[&str]| names.iter().any(|n| is(n));
    Some(
        if known(&["ThrottlingException", "ServiceQuotaExceededException"]) {
            ErrorClass::RateLimit
        } else if known(&[
            "ModelNotReadyException",
            "ServiceUnavailableException",
            "InternalServerException",
            "ModelErrorException",
            "ModelStreamErrorException",
            "CorruptFrame",
        ]) {
            ErrorClass::Server
        } else if is("ModelTimeoutException") {
            ErrorClass::Timeout
        } else if known(&[
            "AccessDeniedException",
            "UnrecognizedClientException",
            "InvalidSignatureException",
            "ExpiredTokenException",
            "MissingAuthenticationTokenException",
        ]) {
            ErrorClass::Auth
        } else if is("ResourceNotFoundException") {
            ErrorClass::NotFound
        } else if is("ValidationException") {
            ErrorClass::RequestCaused
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

/// A non-2xx answer's class: by the `x-amzn-ErrorType` header, else the body's `__type`.
/// `None` (a 2xx, or an unknown or absent type): the status decides, as for any provider
/// (`cascade::classify_status`).
pub fn classify(status: u16, amzn_error_type: Option<&str>, body: &str) -> Option<ErrorClass> {
    if (200..300).contains(&status) {
        return None;
    }
    let from_body = serde_json::from_str::<ErrorBody<'_>>(body)
        .ok()
        .and_then(|b| b.error_type);
    amzn_error_type
        .and_then(error_class)
        .or_else(|| from_body.as_deref().and_then(error_class))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_type_maps_by_type_in_either_camel_case() {
        use ErrorClass::*;
        for (t, class) in [
            ("ThrottlingException", RateLimit),
            ("ServiceQuotaExceededException", RateLimit),
            ("ModelNotReadyException", Server),
            ("ServiceUnavailableException", Server),
            ("InternalServerException", Server),
            ("ModelErrorException", Server),
            ("ModelStreamErrorException", Server),
            ("CorruptFrame", Server),
            ("ModelTimeoutException", Timeout),
            ("AccessDeniedException", Auth),
            ("UnrecognizedClientException", Auth),
            ("InvalidSignatureException", Auth),
            ("ExpiredTokenException", Auth),
            ("MissingAuthenticationTokenException", Auth),
            ("ResourceNotFoundException", NotFound),
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
            Some(ErrorClass::RequestCaused)
        );
    }

    #[test]
    fn the_type_decides_never_the_status() {
        let throttled =
            r#"{"__type":"com.amazon.coral.service#ThrottlingException","message":"slow"}"#;
        for (status, header, body, class) in [
            (
                400,
                Some("ExpiredTokenException:http://x/"),
                "",
                ErrorClass::Auth,
            ),
            (400, None, throttled, ErrorClass::RateLimit),
            (424, Some("ModelErrorException"), "", ErrorClass::Server),
            (
                403,
                Some("ValidationException"),
                "",
                ErrorClass::RequestCaused,
            ),
        ] {
            assert_eq!(
                classify(status, header, body),
                Some(class),
                "{status} {header:?}"
            );
        }
    }

    #[test]
    fn the_header_is_read_before_the_body() {
        let body = r#"{"__type":"ValidationException"}"#;
        assert_eq!(
            classify(429, Some("ThrottlingException"), body),
            Some(ErrorClass::RateLimit)
        );
        assert_eq!(
            classify(429, Some("NewException"), body),
            Some(ErrorClass::RequestCaused)
        );
    }

    #[test]
    fn an_unknown_or_absent_type_leaves_the_status_to_decide() {
        assert_eq!(classify(429, None, "not json"), None);
        assert_eq!(classify(503, Some("NewException"), "{}"), None);
        assert_eq!(classify(400, None, r#"{"message":"bad"}"#), None);
        assert_eq!(classify(200, Some("ThrottlingException"), ""), None);
    }
}
