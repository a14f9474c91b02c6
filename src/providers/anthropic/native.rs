//! A Messages stream from an Anthropic candidate to a Messages caller: the events pass as sent,
//! and after `message_stop` comes the `[DONE]` that tells the relay the answer is complete (the
//! Messages surface drops it again on the way out).

use crate::api::error::anthropic_event;
use crate::stream::sse::SseParser;

/// The relay's end-of-answer marker.
pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// Upstream side, Anthropic candidate on the Messages surface: events pass untouched; after
/// `message_stop` comes the `[DONE]` that tells the relay the answer is complete.
#[derive(Debug, Default)]
pub struct NativeDecoder {
    parser: SseParser,
}

impl NativeDecoder {
    /// The part-read event, taken out; the parser starts afresh.
    pub fn take_pending(&mut self) -> Vec<u8> {
        self.parser.take_pending()
    }

    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        let Ok(events) = self.parser.push(chunk) else {
            return anthropic_event("api_error", "event too large");
        };
        let mut out = Vec::with_capacity(chunk.len());
        for e in events {
            out.extend_from_slice(&e.raw);
            let stop = e.name.as_deref() == Some("message_stop")
                || (e.name.is_none() && e.data.contains("\"message_stop\""));
            if stop {
                out.extend_from_slice(DONE);
            }
        }
        out
    }
}
