//! What an error answer means, read by a family whose errors the status alone does not tell
//! (Bedrock names its errors by type; Google's envelope carries a reason and a retry delay).
//!
//! Providers sit below the cascade, so this is the providers' own word for it; the cascade maps
//! it one for one (`cascade::platform_status`): `RateLimit` and `Auth` try the next key, every
//! other class but `RequestCaused` moves down the chain, and `RequestCaused` stops the cascade
//! with the answer passed through.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The key's rate or quota is used up.
    RateLimit,
    /// The key's credentials were refused.
    Auth,
    /// The model or the service failed.
    Server,
    Timeout,
    /// The model is not there (for this account, project or region).
    NotFound,
    /// The provider refused for a reason of its own that is not the request's (a project that
    /// may not use the API).
    UpstreamClientError,
    /// The request's own fault.
    RequestCaused,
}
