//! Who may call the admin API (`/admin/v1/*`, and the metrics scrape): the bearer of the
//! deployment's admin key, compared in constant time. A deployment without one admits nobody.

use super::{unauthorized, Verb};
use crate::api::ApiError;
use crate::callers::auth::{bearer, secrets_match};

/// `authorization` is the request's header as sent; `admin_key` the `CG_ADMIN` secret (empty
/// when it is not set).
pub fn authorize(authorization: Option<&str>, admin_key: &str) -> Result<(), ApiError> {
    match bearer(authorization) {
        Some(token) if secrets_match(token, admin_key) => Ok(()),
        _ => Err(unauthorized()),
    }
}

impl Verb {
    /// The verb of an HTTP method named as the runtime names it (`GET`, `POST`...); a method
    /// the admin API does not answer to is `Other`.
    pub fn of_method(name: &str) -> Self {
        match name {
            "GET" => Self::Get,
            "POST" => Self::Post,
            "PUT" => Self::Put,
            "PATCH" => Self::Patch,
            "DELETE" => Self::Delete,
            _ => Self::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bearer_of_the_admin_key_is_admitted() {
        assert!(authorize(Some("Bearer s3cret"), "s3cret").is_ok());
        assert!(authorize(Some("bearer s3cret"), "s3cret").is_ok());
        for wrong in [
            None,
            Some("Bearer nope"),
            Some("s3cret"),
            Some("Basic s3cret"),
        ] {
            let err = authorize(wrong, "s3cret").unwrap_err();
            assert_eq!(err.status(), 401, "{wrong:?}");
        }
    }

    #[test]
    fn a_deployment_without_an_admin_key_admits_nobody() {
        assert!(authorize(Some("Bearer "), "").is_err());
        assert!(authorize(Some("Bearer x"), "").is_err());
    }

    #[test]
    fn the_admin_api_answers_five_verbs_and_every_other_method_is_other() {
        let verbs = ["GET", "POST", "PUT", "PATCH", "DELETE"].map(Verb::of_method);
        let expected = [Verb::Get, Verb::Post, Verb::Put, Verb::Patch, Verb::Delete];
        assert_eq!(verbs, expected);
        for other in ["HEAD", "OPTIONS", "TRACE", "get"] {
            assert_eq!(Verb::of_method(other), Verb::Other, "{other}");
        }
    }
}
