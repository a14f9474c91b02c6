//! A chain that cannot be built, as the caller's error: one mapping for the request path and
//! `explain`, so an unknown name is the same 404 `model_not_found` on both. The rest of routing
//! decides without knowing how its refusals are shown.

use super::{pin, ChainError};
use crate::api::{ApiError, ErrorKind};

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
        }
    }
}
