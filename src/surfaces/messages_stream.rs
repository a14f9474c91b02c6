//! Messages streams. From an OpenAI-compatible candidate, the relayed `chat.completion.chunk`s
//! become the Messages event sequence; from an Anthropic candidate the events pass through as
//! sent, marked for the relay with the `[DONE]` it watches for (and unmarked again on the way out).

use super::errors::anthropic_event;
use super::messages_response::{message_id, stop_reason};
use crate::config::SortedMap;
use crate::stream::sse::{EventKind, SseParser};
use serde_json::{json, Value};

fn event(out: &mut Vec<u8>, name: &str, data: &Value) {
    out.extend_from_slice(format!("event: {name}\ndata: {data}\n\n").as_bytes());
}

/// The relay's final error event (OpenAI-shaped) as Messages' `error` event.
fn error_from(data: &str) -> Vec<u8> {
    let v: Value = serde_json::from_str(data).unwrap_or_default();
    let message = v["error"]["message"]
        .as_str()
        .unwrap_or("The upstream stream failed.");
    anthropic_event("api_error", message)
}

/// Caller side of the native stream: the `[DONE]` marker is dropped, the relay's error event
/// becomes Messages' `error` event, everything else is forwarded as it came.
#[derive(Debug, Default)]
pub struct NativeFilter {
    parser: SseParser,
}

impl NativeFilter {
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        let Ok(events) = self.parser.push(bytes) else {
            return anthropic_event("api_error", "event too large");
        };
        let mut out = Vec::with_capacity(bytes.len());
        for e in events {
            match e.kind {
                EventKind::Done => {}
                EventKind::Error(_) if e.name.is_none() => out.extend(error_from(&e.data)),
                _ => out.extend_from_slice(&e.raw),
            }
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
    /// A tool call, by its chat `tool_calls` index.
    Tool(u64),
}

/// Caller side, OpenAI-compatible candidate: chunks → Messages events.
#[derive(Debug, Default)]
pub struct Encoder {
    parser: SseParser,
    started: bool,
    /// The open content block and its index.
    open: Option<(u64, Open)>,
    next_index: u64,
    tools: SortedMap<u64, u64>,
    stop: Option<&'static str>,
    usage: Value,
    /// The prompt estimate (`usage::estimate`), shown in `message_start`: the upstream reports
    /// its count only at the end, and clients (Claude Code) read their context size from the
    /// start event.
    input_estimate: u64,
}

impl Encoder {
    pub fn with_input_estimate(input_tokens: u64) -> Self {
        Self {
            input_estimate: input_tokens,
            ..Self::default()
        }
    }

    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        let Ok(events) = self.parser.push(bytes) else {
            return anthropic_event("api_error", "event too large");
        };
        let mut out = Vec::new();
        for e in events {
            match e.kind {
                EventKind::Done => self.finish(&mut out),
                EventKind::Error(_) => out.extend(error_from(&e.data)),
                EventKind::Data => {
                    if let Ok(chunk) = serde_json::from_str::<Value>(&e.data) {
                        self.on_chunk(&chunk, &mut out);
                    }
                }
                EventKind::Empty => {}
            }
        }
        out
    }

    fn on_chunk(&mut self, c: &Value, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            let message = json!({
                "id": message_id(c["id"].as_str().unwrap_or("")), "type": "message", "role": "assistant",
                "model": c["model"], "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": self.input_estimate, "output_tokens": 0},
            });
            event(
                out,
                "message_start",
                &json!({"type": "message_start", "message": message}),
            );
            event(out, "ping", &json!({"type": "ping"}));
        }
        if c.get("usage").is_some_and(Value::is_object) {
            self.usage = super::messages_response::usage(&c["usage"]);
        }
        let choice = &c["choices"][0];
        let d = &choice["delta"];
        if let Some(r) = d["reasoning_content"].as_str().filter(|r| !r.is_empty()) {
            let i = self.ensure(
                Open::Thinking,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                out,
            );
            delta(out, i, json!({"type": "thinking_delta", "thinking": r}));
        }
        if let Some(t) = d["content"].as_str().filter(|t| !t.is_empty()) {
            let i = self.ensure(Open::Text, json!({"type": "text", "text": ""}), out);
            delta(out, i, json!({"type": "text_delta", "text": t}));
        }
        for call in d["tool_calls"].as_array().into_iter().flatten() {
            let n = call["index"].as_u64().unwrap_or(0);
            if call.get("id").is_some_and(Value::is_string) {
                let block = json!({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": {}});
                let i = self.ensure(Open::Tool(n), block, out);
                self.tools.insert(n, i);
            }
            let args = call["function"]["arguments"].as_str().unwrap_or("");
            if let (false, Some(i)) = (args.is_empty(), self.tools.get(&n).copied()) {
                delta(
                    out,
                    i,
                    json!({"type": "input_json_delta", "partial_json": args}),
                );
            }
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            self.stop = Some(stop_reason(f));
        }
    }

    /// The open block if it is `kind`; otherwise the open one closes and a new one starts.
    fn ensure(&mut self, kind: Open, block: Value, out: &mut Vec<u8>) -> u64 {
        if let Some((i, open)) = self.open {
            if open == kind {
                return i;
            }
        }
        self.close(out);
        let i = self.next_index;
        self.next_index += 1;
        self.open = Some((i, kind));
        event(
            out,
            "content_block_start",
            &json!({"type": "content_block_start", "index": i, "content_block": block}),
        );
        i
    }

    fn close(&mut self, out: &mut Vec<u8>) {
        if let Some((i, _)) = self.open.take() {
            event(
                out,
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": i}),
            );
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>) {
        self.close(out);
        let mut usage = self.usage.clone();
        if !usage.is_object() {
            usage = json!({"output_tokens": 0});
        }
        let stop = self.stop.unwrap_or("end_turn");
        event(
            out,
            "message_delta",
            &json!({"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": usage}),
        );
        event(out, "message_stop", &json!({"type": "message_stop"}));
    }
}

fn delta(out: &mut Vec<u8>, index: u64, delta: Value) {
    event(
        out,
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::anthropic::native::{NativeDecoder, DONE};

    fn names(out: &[u8]) -> Vec<String> {
        String::from_utf8_lossy(out)
            .lines()
            .filter_map(|l| l.strip_prefix("event: ").map(str::to_owned))
            .collect()
    }

    #[test]
    fn chat_chunks_become_the_messages_event_sequence_with_usage_in_message_delta() {
        let mut e = Encoder::default();
        let chunks = [
            json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
            json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {"reasoning_content": "hm"}}]}),
            json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {"content": "Hi"}}]}),
            json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}]}}]}),
            json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":1}"}}]}}]}),
            json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"id": "c1", "model": "gpt", "choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 3}}),
        ];
        let mut out = Vec::new();
        for c in chunks {
            out.extend(e.push(format!("data: {c}\n\n").as_bytes()));
        }
        out.extend(e.push(DONE));
        assert_eq!(
            names(&out),
            [
                "message_start",
                "ping",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r#""type":"thinking_delta""#));
        assert!(text.contains(r#""partial_json":"{\"a\":1}""#));
        assert!(text.contains(r#""stop_reason":"tool_use""#));
        assert!(text.contains(r#""usage":{"input_tokens":2,"output_tokens":3}"#));
    }

    #[test]
    fn message_start_carries_the_input_estimate_and_message_delta_the_reported_usage() {
        let mut e = Encoder::with_input_estimate(1_234);
        let first = json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {"content": "Hi"}}]});
        let usage = json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 1_200, "completion_tokens": 3}});
        let mut out = e.push(format!("data: {first}\n\ndata: {usage}\n\n").as_bytes());
        out.extend(e.push(DONE));
        let text = String::from_utf8(out).unwrap();
        let start = text
            .lines()
            .find(|l| l.starts_with("data:") && l.contains("\"message_start\""))
            .unwrap();
        assert!(
            start.contains(r#""usage":{"input_tokens":1234,"output_tokens":0}"#),
            "{start}"
        );
        assert!(
            text.contains(r#""usage":{"input_tokens":1200,"output_tokens":3}"#),
            "{text}"
        );
    }

    #[test]
    fn the_relays_error_event_leaves_as_a_messages_error_event() {
        let mut e = Encoder::default();
        let out = e.push(&crate::stream::relay::error_event());
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("event: error\ndata: {\"error\":{\"message\":"),
            "{text}"
        );
        assert!(text.contains(r#""type":"api_error""#));
        let mut f = NativeFilter::default();
        assert!(
            String::from_utf8(f.push(&crate::stream::relay::error_event()))
                .unwrap()
                .starts_with("event: error")
        );
    }

    #[test]
    fn a_native_stream_is_marked_done_after_message_stop_and_unmarked_for_the_caller() {
        let upstream = "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let mut d = NativeDecoder::default();
        let (a, b) = upstream.split_at(20);
        let mut marked = d.push(a.as_bytes());
        marked.extend(d.push(b.as_bytes()));
        assert!(marked.ends_with(DONE));
        let mut f = NativeFilter::default();
        assert_eq!(f.push(&marked), upstream.as_bytes());
    }
}
