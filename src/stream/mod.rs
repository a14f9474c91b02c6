//! Streamed answers: an incremental SSE parser and the relay that decides, chunk by chunk, what
//! reaches the caller and how the stream ended. Pure; the edge only moves the bytes.

pub mod relay;
pub mod sse;

pub use relay::{error_event, Relay, RelayStep, StreamEnd};
pub use sse::{Event, EventKind, SseParser};
