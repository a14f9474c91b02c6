//! Streamed answers: an incremental SSE parser, the relay that decides, chunk by chunk, what
//! reaches the caller and how the stream ended, and whose silence ends it. Pure; the edge only
//! moves the bytes.

pub mod idle;
pub mod relay;
pub mod sse;

pub use idle::{Awaiting, IdleCheck, IdleWatch, QuietEnd};
pub use relay::{error_event, Relay, RelayStep, StreamEnd};
pub use sse::{Event, EventKind, SseParser};
