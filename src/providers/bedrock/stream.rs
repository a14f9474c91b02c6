//! ConverseStream (AWS event stream frames) → `chat.completion.chunk` events ending in `[DONE]`.
//! An exception frame, a corrupt frame, or a stop for malformed output becomes an OpenAI-shaped
//! error event, after which nothing more is read (the relay ends the stream on it; before the
//! first data event the gateway fails over, classified by `errors::error_class` on its type).

use super::event_stream::{Frame, FrameDecoder};
use super::finish_reason;
use super::response::usage;
use crate::providers::chat_chunk::{emit, ChunkId};
use serde_json::{json, Value};

/// The relay's end-of-answer marker.
pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// The error type of a stream whose frames cannot be read (classified as `server`).
pub const CORRUPT_FRAME: &str = "CorruptFrame";

/// The error type of a stream that stopped for malformed model output or tool use (`server`).
pub const MALFORMED_OUTPUT: &str = "ModelErrorException";

#[derive(Debug)]
pub struct Translator {
    frames: FrameDecoder,
    /// The id and model stamped on every chunk.
    ids: ChunkId,
    /// The role chunk is out: it goes just before the first content chunk, so a lone
    /// `messageStart` sends no data event and the gateway may still fail over.
    started: bool,
    /// `messageStop` came: the answer is whole but for its usage.
    stopped: bool,
    /// `[DONE]` or an error event is out: nothing more is read.
    finished: bool,
    /// Content block index → tool call index, in the order the tool uses started.
    tools: Vec<(u64, usize)>,
}

impl Default for Translator {
    fn default() -> Self {
        Self::new("chatcmpl-bedrock".to_owned(), String::new())
    }
}

impl Translator {
    /// `id` and `model` stamp every chunk (a Converse stream names neither).
    pub fn new(id: String, model: String) -> Self {
        Self {
            frames: FrameDecoder::default(),
            ids: ChunkId {
                id,
                model,
                created: 0,
            },
            started: false,
            stopped: false,
            finished: false,
            tools: Vec::new(),
        }
    }

    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        let frames = match self.frames.push(chunk) {
            Ok(frames) => frames,
            Err(e) => {
                self.error(&mut out, CORRUPT_FRAME, e.as_str());
                return out;
            }
        };
        for frame in frames {
            self.on_frame(&frame, &mut out);
            if self.finished {
                break;
            }
        }
        out
    }

    /// The body closed. A stream that stopped but sent no `metadata` is still a whole answer:
    /// `[DONE]` goes out, without a usage chunk (its tokens are then estimated, never taken as
    /// zero). Any other stream ends with nothing, and the gateway treats it as cut.
    pub fn end(&mut self) -> Vec<u8> {
        if self.stopped && !self.finished {
            self.finished = true;
            return DONE.to_vec();
        }
        Vec::new()
    }

    fn on_frame(&mut self, frame: &Frame, out: &mut Vec<u8>) {
        let payload = serde_json::from_slice::<Value>(&frame.payload).unwrap_or_default();
        let exception = match frame.message_type.as_deref() {
            Some(kind) => kind == "exception",
            None => frame.exception_type.is_some(),
        };
        match frame.message_type.as_deref() {
            _ if exception => {
                let kind = frame.exception_type.as_deref().unwrap_or("");
                let message = payload
                    .get("message")
                    .or_else(|| payload.get("Message"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                self.error(out, kind, message);
            }
            Some("error") => {
                let kind = frame.error_code.as_deref().unwrap_or("");
                let message = frame.error_message.as_deref().unwrap_or("");
                self.error(out, kind, message);
            }
            _ => {
                if let Some(event) = frame.event_type.as_deref() {
                    self.on_event(event, &payload, out);
                }
            }
        }
    }

    fn on_event(&mut self, event: &str, data: &Value, out: &mut Vec<u8>) {
        let block = data
            .get("contentBlockIndex")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        match event {
            "contentBlockStart" => {
                let Some(tool) = data.get("start").and_then(|s| s.get("toolUse")) else {
                    return;
                };
                let index = self.tools.len();
                self.tools.push((block, index));
                let call = json!({"index": index, "id": tool.get("toolUseId"), "type": "function",
                    "function": {"name": tool.get("name"), "arguments": ""}});
                self.content(out, json!({"tool_calls": [call]}));
            }
            "contentBlockDelta" => self.on_delta(block, data.get("delta"), out),
            // A second stop says nothing new.
            "messageStop" if !self.stopped => {
                let reason = data
                    .get("stopReason")
                    .and_then(Value::as_str)
                    .unwrap_or("end_turn");
                match finish_reason(reason) {
                    Some(finish) => {
                        self.role(out);
                        self.chunk(out, json!({}), Some(finish));
                        self.stopped = true;
                    }
                    None => self.error(
                        out,
                        MALFORMED_OUTPUT,
                        &format!("Bedrock stopped with {reason}"),
                    ),
                }
            }
            "metadata" => {
                self.ids
                    .usage(out, usage(data.get("usage").unwrap_or(&Value::Null)));
                out.extend_from_slice(DONE);
                self.finished = true;
            }
            // messageStart, contentBlockStop and event types added later carry nothing to forward.
            _ => {}
        }
    }

    fn on_delta(&mut self, block: u64, delta: Option<&Value>, out: &mut Vec<u8>) {
        let Some(delta) = delta else { return };
        let text = |v: Option<&Value>| {
            v.and_then(|t| t.get("text"))
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        if let Some(t) = delta.get("text").and_then(Value::as_str) {
            if !t.is_empty() {
                self.content(out, json!({"content": t}));
            }
        } else if let Some(input) = delta.get("toolUse").and_then(|t| t.get("input")) {
            let known = self.tools.iter().find(|(b, _)| *b == block);
            if let Some(&(_, index)) = known {
                let call = json!({"index": index, "function": {"arguments": input}});
                self.content(out, json!({"tool_calls": [call]}));
            }
        } else if let Some(t) = text(delta.get("reasoningContent")) {
            self.content(out, json!({"reasoning_content": t}));
        }
    }

    /// A content chunk, with the role chunk just before the first.
    fn content(&mut self, out: &mut Vec<u8>, delta: Value) {
        self.role(out);
        self.chunk(out, delta, None);
    }

    fn role(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            self.chunk(out, json!({"role": "assistant", "content": ""}), None);
        }
    }

    fn error(&mut self, out: &mut Vec<u8>, kind: &str, message: &str) {
        emit(
            out,
            &json!({"error": {"type": upper_camel(kind), "message": message}}),
        );
        self.finished = true;
    }

    fn chunk(&self, out: &mut Vec<u8>, delta: Value, finish: Option<&str>) {
        self.ids.chunk(out, delta, finish);
    }
}

/// In-stream exception types are lowerCamel (`throttlingException`); HTTP ones, and the error
/// events the gateway reads, are UpperCamel.
fn upper_camel(kind: &str) -> String {
    let mut chars = kind.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => "UnknownException".to_owned(),
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
