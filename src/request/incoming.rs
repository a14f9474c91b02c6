//! The caller's request as the core reads it: headers from one snapshot, and a body read only
//! when asked, within a limit.

use crate::api::ApiError;

#[allow(async_fn_in_trait)]
pub trait Incoming {
    /// The header's value as the runtime's `Headers.get` gives it (names in any case).
    fn header(&self, name: &str) -> Option<&str>;

    /// The whole body, refused with 413 past `limit` bytes: an announced length is checked
    /// before anything is read, and an unannounced body while it is read, so neither is buffered
    /// past the limit.
    async fn body(&self, limit: usize) -> Result<Vec<u8>, ApiError>;
}
