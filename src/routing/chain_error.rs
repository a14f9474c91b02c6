//! A chain that cannot be built, as the caller's error: one mapping for the request path and
//! `explain` (issue 24), so an unknown name is the same 404 `model_not_found` on both.

use super::chain::ChainError;
use super::pin;
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
        }
    }
}
