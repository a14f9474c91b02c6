//! The chat-completions stream a translated family's events become: `data:` events of
//! `chat.completion.chunk` objects, one choice each. Every translator writes through here, so the
//! chunks of Anthropic, Bedrock and Gemini upstreams have one shape.

use crate::stream::sse::Event;
use crate::stream::SseParser;
use serde_json::{json, Value};

/// Who the chunks of one answer say they are.
#[derive(Debug, Default)]
pub struct ChunkId {
    pub id: String,
    pub model: String,
    /// Epoch seconds (0 where the family's answers carry none).
    pub created: u64,
}

impl ChunkId {
    /// One chunk: `delta` for choice 0, with its finish reason when it is the last.
    pub fn chunk(&self, out: &mut Vec<u8>, delta: Value, finish: Option<&str>) {
        let c = json!({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        emit(out, &c);
    }

    /// The usage chunk: no choice, the answer's `usage`.
    pub fn usage(&self, out: &mut Vec<u8>, usage: Value) {
        let c = json!({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model, "choices": [], "usage": usage});
        emit(out, &c);
    }
}

/// One `data:` event.
pub fn emit(out: &mut Vec<u8>, event: &Value) {
    out.extend_from_slice(format!("data: {event}\n\n").as_bytes());
}

/// The complete SSE events `chunk` ends, each with its data parsed (an event whose data is not
/// JSON is passed over); `None` after writing the error event that ends the stream, when an event
/// outgrew the parser's bound.
pub fn json_events(
    parser: &mut SseParser,
    chunk: &[u8],
    out: &mut Vec<u8>,
) -> Option<Vec<(Event, Value)>> {
    let Ok(events) = parser.push(chunk) else {
        emit(
            out,
            &json!({"error": {"type": "api_error", "message": "event too large"}}),
        );
        return None;
    };
    let parsed = events.into_iter().filter_map(|e| {
        let data = serde_json::from_str::<Value>(&e.data).ok()?;
        Some((e, data))
    });
    Some(parsed.collect())
}
