//! A chain that cannot be built, as the caller's error: one mapping for the request path and
//! `explain`, so an unknown name is the same 404 `model_not_found` on both. The rest of routing
//! decides without knowing how its refusals are shown.

use super::pin;
use crate::api::{ApiError, ErrorKind};

#[derive(Debug, Clone, PartialEq, Eq, displaydoc::Display)]
pub enum ChainError {
    /// The model '{0}' does not exist.
    UnknownName(String),
    /// No routing candidate is available for '{name}': {reasons}.
    NoCandidates { name: String, reasons: String },
    /// '{0}' names no ranked chain: use auto, auto:balanced, auto:fast, auto:cheap, auto:smart, auto:reliable or auto:<routing rule>.
    UnknownChain(String),
    /// This API key may use none of the models '{0}' ranks.
    NoneAllowed(String),
    /// X-CogniGate-Pin-Provider names '{0}', which is not a provider of this tenant.
    UnknownProvider(String),
    /// X-CogniGate-Pin-Platform names '{0}', which is not a platform: use direct, bedrock, vertex, azure or custom.
    UnknownPlatform(String),
    /// {pin} asks for providers outside {restrictions}, which this request matches.
    Restricted {
        pin: String,
        restrictions: String,
        param: &'static str,
    },
}

impl std::error::Error for ChainError {}

impl ChainError {
    pub fn api_error(&self) -> ApiError {
        match self {
            Self::UnknownName(_) => {
                ApiError::new(ErrorKind::ModelNotFound, self.to_string()).with_param("model")
            }
            Self::NoCandidates { .. } => ApiError::new(ErrorKind::NoCandidates, self.to_string()),
            Self::UnknownChain(_) => {
                ApiError::new(ErrorKind::UnknownChain, self.to_string()).with_param("model")
            }
            Self::NoneAllowed(_) => {
                ApiError::new(ErrorKind::ModelNotAllowed, self.to_string()).with_param("model")
            }
            Self::UnknownProvider(_) => {
                ApiError::new(ErrorKind::UnknownProvider, self.to_string()).with_param(pin::HEADER)
            }
            Self::UnknownPlatform(_) => ApiError::new(ErrorKind::UnknownPlatform, self.to_string())
                .with_param(pin::PLATFORM_HEADER),
            Self::Restricted { param, .. } => {
                ApiError::new(ErrorKind::Restricted, self.to_string()).with_param(*param)
            }
        }
    }
}
