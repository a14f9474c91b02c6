//! What a successful upstream call hands to the caller: a whole body, or a stream past its
//! decision point.

use super::body_read::BodyReader;
use crate::providers::StreamDecoder;
use crate::stream::{Relay, StreamEnd};
use crate::surfaces::Encoder;
use worker::AbortController;

/// What a successful upstream call hands to the caller (`cascade::UpstreamBody`).
pub type UpstreamBody = crate::cascade::UpstreamBody<StreamStart>;

/// An SSE stream past its decision point: its first data event has arrived, so from here on a
/// failure can no longer fail over.
pub struct StreamStart {
    /// Complete events read so far, to forward first.
    pub first: Vec<u8>,
    /// Set when the stream already ended (a tiny stream whose `[DONE]` came with the first event).
    pub finished: Option<StreamEnd>,
    /// The rest of the body, read on by the relay.
    pub rest: BodyReader,
    pub relay: Relay,
    pub decoder: StreamDecoder,
    /// Puts what the relay forwards into the caller's surface.
    pub encoder: Encoder,
    /// Aborting it cancels the upstream read.
    pub controller: AbortController,
    pub read_timeout_ms: u64,
    /// When the upstream request was sent (a stream's total time runs from here), and how long
    /// its response headers took.
    pub started_ms: u64,
    pub headers_ms: u64,
}

impl crate::cascade::StreamHead for StreamStart {
    fn headers_ms(&self) -> u64 {
        self.headers_ms
    }
}
