//! Messages stream (named events) → `chat.completion.chunk` events ending in `[DONE]`. An `error`
//! event becomes an OpenAI-shaped error event, which the relay then treats like any other.

use super::{finish_reason, native::DONE, response::usage};
use crate::api::ChatRequest;
use crate::config::SortedMap;
use crate::providers::chat_chunk::{emit, json_events, ChunkId};
use crate::stream::SseParser;
use serde_json::{json, Value};

/// The caller asked for the usage chunk (`stream_options.include_usage`). The translated stream
/// always carries it (usage is metered from it); the relay strips it when this is false.
pub fn wants_usage(req: &ChatRequest) -> bool {
    req.value("stream_options")
        .as_ref()
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true)
}

#[derive(Debug, Default)]
pub struct Translator {
    parser: SseParser,
    /// The answer's id and model stamp every chunk (`created` stays 0: Anthropic names none).
    ids: ChunkId,
    input: Value,
    output_tokens: u64,
    /// Content block index → tool call index.
    tools: SortedMap<u64, usize>,
}

impl Translator {
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let Some(events) = json_events(&mut self.parser, chunk, &mut out) else {
            return out;
        };
        for (event, data) in events {
            let kind = event
                .name
                .or_else(|| data.get("type").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_default();
            self.on_event(&kind, &data, &mut out);
        }
        out
    }

    fn on_event(&mut self, kind: &str, data: &Value, out: &mut Vec<u8>) {
        match kind {
            "message_start" => {
                let m = &data["message"];
                self.ids.id = m["id"].as_str().unwrap_or("").to_owned();
                self.ids.model = m["model"].as_str().unwrap_or("").to_owned();
                self.input = m["usage"].clone();
                self.chunk(out, json!({"role": "assistant", "content": ""}), None);
            }
            "content_block_start" => {
                let block = &data["content_block"];
                if block["type"] == "tool_use" {
                    let index = self.tools.len();
                    self.tools
                        .insert(data["index"].as_u64().unwrap_or(0), index);
                    let call = json!({"index": index, "id": block["id"], "type": "function",
                        "function": {"name": block["name"], "arguments": ""}});
                    self.chunk(out, json!({"tool_calls": [call]}), None);
                }
            }
            "content_block_delta" => self.on_delta(data, out),
            "message_delta" => {
                if let Some(n) = data["usage"]["output_tokens"].as_u64() {
                    self.output_tokens = n;
                }
                let reason = data["delta"]["stop_reason"].as_str().unwrap_or("end_turn");
                self.chunk(out, json!({}), Some(finish_reason(reason)));
            }
            "message_stop" => {
                self.ids.usage(out, usage(&self.input, self.output_tokens));
                out.extend_from_slice(DONE);
            }
            "error" => {
                let e = &data["error"];
                emit(
                    out,
                    &json!({"error": {"type": e["type"], "message": e["message"]}}),
                );
            }
            // ping, content_block_stop and event types added later carry nothing to forward.
            _ => {}
        }
    }

    fn on_delta(&mut self, data: &Value, out: &mut Vec<u8>) {
        let d = &data["delta"];
        match d["type"].as_str() {
            Some("text_delta") => self.chunk(out, json!({"content": d["text"]}), None),
            Some("thinking_delta") => {
                self.chunk(out, json!({"reasoning_content": d["thinking"]}), None)
            }
            Some("input_json_delta") => {
                let block = data["index"].as_u64().unwrap_or(0);
                if let Some(index) = self.tools.get(&block).copied() {
                    let call =
                        json!({"index": index, "function": {"arguments": d["partial_json"]}});
                    self.chunk(out, json!({"tool_calls": [call]}), None);
                }
            }
            _ => {}
        }
    }

    fn chunk(&self, out: &mut Vec<u8>, delta: Value, finish: Option<&str>) {
        self.ids.chunk(out, delta, finish);
    }
}
