//! What a successful upstream call hands to the caller: a whole body, or a stream past its
//! decision point. The stream itself is the runtime's (`S`); the core reads only when its
//! response headers came.

use crate::usage::TokenCounts;

/// A stream past its first event, as the core sees it.
pub trait StreamHead {
    /// Request sent to response headers.
    fn headers_ms(&self) -> u64;
}

pub enum UpstreamBody<S> {
    /// A complete, well-formed JSON body.
    Full {
        content_type: String,
        bytes: Vec<u8>,
        /// The tokens the upstream reported (`None`: unknown).
        usage: Option<TokenCounts>,
        /// Request sent to response headers (the live stats' time to first byte).
        headers_ms: u64,
        /// The upstream's own answer was a safety refusal (read only when watched for).
        refusal: bool,
    },
    Stream(S),
}

impl<S: StreamHead> UpstreamBody<S> {
    /// Request sent to response headers: what the live stats count as time to first byte.
    pub fn headers_ms(&self) -> u64 {
        match self {
            Self::Full { headers_ms, .. } => *headers_ms,
            Self::Stream(s) => s.headers_ms(),
        }
    }
}
