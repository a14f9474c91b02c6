//! What a caller sees when governance refuses a request: the OpenAI error shape, before any
//! upstream call.

use crate::api::error::ErrorKind;
use crate::api::ApiError;
use crate::config::policy::KeyPolicy;
use serde::{Deserialize, Serialize};

/// Why a request was refused, each with its status and error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Denial {
    KeyBudget,
    TenantBudget,
    EndUserBudget,
    KeyRpm,
    KeyTpm,
    EndUserRpm,
    /// The ledger cannot be reached and this isolate has no slice left to admit from.
    LedgerUnreachable,
}

impl Denial {
    /// Status, `type` and `code` come from the one error vocabulary.
    pub fn error_kind(self) -> ErrorKind {
        match self {
            Self::KeyBudget => ErrorKind::BudgetExceeded,
            Self::TenantBudget => ErrorKind::TenantBudgetExceeded,
            Self::EndUserBudget => ErrorKind::EndUserBudgetExceeded,
            Self::KeyRpm | Self::KeyTpm | Self::EndUserRpm | Self::LedgerUnreachable => {
                ErrorKind::RateLimitExceeded
            }
        }
    }

    pub fn status(self) -> u16 {
        self.error_kind().parts().0
    }

    pub fn code(self) -> &'static str {
        self.error_kind().parts().2
    }

    pub fn message(self) -> &'static str {
        match self {
            Self::KeyBudget => "This API key has spent its budget for the current period.",
            Self::TenantBudget => "The tenant has spent its budget for the current period.",
            Self::EndUserBudget => "This end user has spent their budget for the current period.",
            Self::KeyRpm => "This API key is over its requests-per-minute limit.",
            Self::KeyTpm => "This API key is over its tokens-per-minute limit.",
            Self::EndUserRpm => "This end user is over their requests-per-minute limit.",
            Self::LedgerUnreachable => {
                "Limits cannot be checked right now (the ledger is unreachable); retry shortly."
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
/// May this caller's request go upstream now. The wire keeps its spelling (`verdict`,
/// `refuse`, `refusal`), which the ledger object and the isolates exchange.
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Admission {
    Admit,
    #[serde(rename = "refuse")]
    Deny {
        #[serde(rename = "refusal")]
        denial: Denial,
        /// Whole seconds, at least 1, on rate-limit refusals.
        retry_after_secs: Option<u64>,
    },
}

/// The allow-list check, made from the cached policy alone (no counters, no round trip).
pub fn check_model(policy: &KeyPolicy, requested: &str) -> Result<(), ApiError> {
    if policy.allows(requested) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorKind::ModelNotAllowed,
        format!("This API key may not use the model '{requested}'."),
    )
    .with_param("model"))
}

/// The refusal as an error (`Retry-After` goes on the response beside it).
pub fn refused(refusal: Denial) -> ApiError {
    ApiError::new(refusal.error_kind(), refusal.message())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RouteName;

    #[test]
    fn a_scoped_key_gets_403_model_not_allowed_for_an_unlisted_name() {
        let p = KeyPolicy {
            models: Some(vec![RouteName::parse("fast").unwrap()]),
            ..KeyPolicy::default()
        };
        assert!(check_model(&p, "fast").is_ok());
        let e = check_model(&p, "best").unwrap_err();
        let body: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(e.status(), 403);
        assert_eq!(body["error"]["type"], "permission_error");
        assert_eq!(body["error"]["code"], "model_not_allowed");
        assert_eq!(body["error"]["param"], "model");
    }

    #[test]
    fn budget_refusals_are_402_and_rate_refusals_429_each_with_its_code() {
        for (r, status, code, kind) in [
            (
                Denial::KeyBudget,
                402,
                "budget_exceeded",
                "insufficient_quota",
            ),
            (
                Denial::TenantBudget,
                402,
                "tenant_budget_exceeded",
                "insufficient_quota",
            ),
            (
                Denial::EndUserBudget,
                402,
                "end_user_budget_exceeded",
                "insufficient_quota",
            ),
            (
                Denial::KeyRpm,
                429,
                "rate_limit_exceeded",
                "rate_limit_error",
            ),
            (
                Denial::KeyTpm,
                429,
                "rate_limit_exceeded",
                "rate_limit_error",
            ),
            (
                Denial::EndUserRpm,
                429,
                "rate_limit_exceeded",
                "rate_limit_error",
            ),
            (
                Denial::LedgerUnreachable,
                429,
                "rate_limit_exceeded",
                "rate_limit_error",
            ),
        ] {
            let e = refused(r);
            let body: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
            assert_eq!(
                (e.status(), body["error"]["code"].as_str()),
                (status, Some(code))
            );
            assert_eq!(body["error"]["type"], kind);
        }
    }
}
