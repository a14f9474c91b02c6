//! `streamGenerateContent?alt=sse` → `chat.completion.chunk` events ending in `[DONE]`.
//!
//! Each Gemini event is a whole `GenerateContentResponse` holding the next parts; a function call
//! arrives whole in one part. Gemini sends no end marker: the body closing after a `finishReason`
//! is a complete answer (`end` then writes the usage chunk and `[DONE]`), and closing before one
//! is a cut stream (`end` writes nothing, and the gateway treats it as cut). An `{"error": ...}`
//! event becomes an OpenAI-shaped error event, which the relay ends on.

use super::parts::{self, Piece};
use super::response::{completion_id, usage};
use crate::providers::anthropic::native::DONE;
use crate::providers::chat_chunk::{emit, json_events, ChunkId};
use crate::stream::SseParser;
use serde_json::{json, Value};

#[derive(Debug, Default)]
pub struct Translator {
    parser: SseParser,
    /// `chatcmpl-…`, the model and the epoch second stamped on every chunk.
    ids: ChunkId,
    /// The `responseId` the id came from (tool call ids are built from it).
    response_id: String,
    /// The role chunk went out.
    started: bool,
    /// Tool calls sent so far: the next one's index.
    calls: usize,
    /// A `finishReason` (or a blocked prompt) was seen: the answer is complete.
    finished: bool,
    /// An error event went out: nothing follows it.
    failed: bool,
    /// The last `usageMetadata` seen (Gemini's counts are cumulative).
    usage: Option<Value>,
}

impl Translator {
    /// A translator stamping its chunks with `created` (epoch seconds); `default()` stamps 0.
    pub fn new(created: u64) -> Self {
        Self {
            ids: ChunkId {
                created,
                ..ChunkId::default()
            },
            ..Self::default()
        }
    }

    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        if self.failed {
            return out;
        }
        let Some(events) = json_events(&mut self.parser, chunk, &mut out) else {
            self.failed = true;
            return out;
        };
        for (_, data) in events {
            self.on_event(&data, &mut out);
            if self.failed {
                break;
            }
        }
        out
    }

    /// The body closed: the usage chunk (when Gemini reported tokens) and `[DONE]` if the answer
    /// finished, else nothing.
    pub fn end(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        if !self.finished || self.failed {
            return out;
        }
        // Once only, however often the body is said to close.
        self.finished = false;
        // A report that names no tokens is no report: zeros would be metered as known.
        if let Some((report, Some(_))) = self.usage.take().map(|meta| usage(&meta)) {
            self.ids.usage(&mut out, report);
        }
        out.extend_from_slice(DONE);
        out
    }

    fn on_event(&mut self, data: &Value, out: &mut Vec<u8>) {
        if let Some(e) = data.get("error").filter(|e| !e.is_null()) {
            self.failed = true;
            let kind = e
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("api_error");
            let error = json!({"type": kind, "code": e.get("code"), "message": e.get("message")});
            emit(out, &json!({ "error": error }));
            return;
        }
        if !self.started {
            self.started = true;
            let rid = data.get("responseId").and_then(Value::as_str);
            self.response_id = rid.unwrap_or("").to_owned();
            self.ids.id = completion_id(&self.response_id, self.ids.created);
            let model = data.get("modelVersion").and_then(Value::as_str);
            self.ids.model = model.unwrap_or("").to_owned();
            self.chunk(out, json!({"role": "assistant", "content": ""}), None);
        }
        if let Some(meta) = data.get("usageMetadata").filter(|u| u.is_object()) {
            self.usage = Some(meta.clone());
        }
        for part in parts::parts(parts::candidate(data)) {
            match parts::piece(part, &self.response_id, self.calls) {
                Piece::Text(t) if !t.is_empty() => self.chunk(out, json!({"content": t}), None),
                Piece::Thought(t) if !t.is_empty() => {
                    self.chunk(out, json!({"reasoning_content": t}), None)
                }
                Piece::Call(mut call) => {
                    call["index"] = self.calls.into();
                    self.calls += 1;
                    self.chunk(out, json!({"tool_calls": [call]}), None);
                }
                _ => {}
            }
        }
        if let Some(reason) = parts::finish(data) {
            if !self.finished {
                self.finished = true;
                let finish = super::finish_reason(reason, self.calls > 0);
                self.chunk(out, json!({}), Some(finish));
            }
        }
    }

    fn chunk(&self, out: &mut Vec<u8>, delta: Value, finish: Option<&str>) {
        self.ids.chunk(out, delta, finish);
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
