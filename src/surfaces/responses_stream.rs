//! Relayed `chat.completion.chunk`s → Responses stream events, ending in `response.completed`.

use super::responses_response::{call_item, message_item, response, response_id, usage};
use crate::stream::sse::{EventKind, SseParser};
use serde_json::{json, Value};

#[derive(Debug)]
enum Open {
    /// The message item and its text so far.
    Text(String),
    /// A function call by chat index: its call id, name and arguments so far.
    Call(u64, Value, Value, String),
}

#[derive(Debug, Default)]
pub struct Encoder {
    parser: SseParser,
    seq: u64,
    id: String,
    model: Value,
    created: u64,
    open: Option<Open>,
    done: Vec<Value>,
    finish: Option<String>,
    usage: Value,
}

impl Encoder {
    fn event(&mut self, out: &mut Vec<u8>, name: &str, mut data: Value) {
        data["type"] = name.into();
        data["sequence_number"] = self.seq.into();
        self.seq += 1;
        out.extend_from_slice(format!("event: {name}\ndata: {data}\n\n").as_bytes());
    }

    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let Ok(events) = self.parser.push(bytes) else {
            self.error(&mut out, "event too large");
            return out;
        };
        for e in events {
            match e.kind {
                EventKind::Done => self.finish(&mut out),
                EventKind::Error(_) => {
                    let v: Value = serde_json::from_str(&e.data).unwrap_or_default();
                    let msg = v["error"]["message"]
                        .as_str()
                        .unwrap_or("The upstream stream failed.")
                        .to_owned();
                    self.error(&mut out, &msg);
                }
                EventKind::Data => {
                    if let Ok(c) = serde_json::from_str::<Value>(&e.data) {
                        self.on_chunk(&c, &mut out);
                    }
                }
                EventKind::Empty => {}
            }
        }
        out
    }

    fn error(&mut self, out: &mut Vec<u8>, message: &str) {
        self.event(
            out,
            "error",
            json!({"code": "upstream_stream_error", "message": message, "param": null}),
        );
    }

    fn on_chunk(&mut self, c: &Value, out: &mut Vec<u8>) {
        if self.id.is_empty() {
            self.id = response_id(c["id"].as_str().unwrap_or("stream"));
            self.model = c["model"].clone();
            self.created = c["created"].as_u64().unwrap_or(0);
            let r = response(
                &self.id,
                &self.model,
                self.created,
                Vec::new(),
                None,
                Value::Null,
            );
            self.event(out, "response.created", json!({"response": r}));
            self.event(out, "response.in_progress", json!({"response": r}));
        }
        if c.get("usage").is_some_and(Value::is_object) {
            self.usage = usage(&c["usage"]);
        }
        let choice = &c["choices"][0];
        let d = &choice["delta"];
        if let Some(t) = d["content"].as_str().filter(|t| !t.is_empty()) {
            if !matches!(self.open, Some(Open::Text(_))) {
                self.close(out);
                let item = message_item(&self.item_id(), "", "in_progress");
                let mut item = item;
                item["content"] = json!([]);
                self.added(out, item);
                let (oi, id) = (self.done.len(), self.item_id());
                self.event(
                    out,
                    "response.content_part.added",
                    json!({"item_id": id, "output_index": oi, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []}}),
                );
                self.open = Some(Open::Text(String::new()));
            }
            if let Some(Open::Text(s)) = &mut self.open {
                s.push_str(t);
            }
            let (oi, id) = (self.done.len(), self.item_id());
            self.event(out, "response.output_text.delta", json!({"item_id": id, "output_index": oi, "content_index": 0, "delta": t, "logprobs": []}));
        }
        for call in d["tool_calls"].as_array().into_iter().flatten() {
            let n = call["index"].as_u64().unwrap_or(0);
            let same = matches!(&self.open, Some(Open::Call(i, ..)) if *i == n);
            if !same && call.get("id").is_some_and(Value::is_string) {
                self.close(out);
                let (cid, name) = (call["id"].clone(), call["function"]["name"].clone());
                let item = call_item(&self.item_id(), &cid, &name, "", "in_progress");
                self.added(out, item);
                self.open = Some(Open::Call(n, cid, name, String::new()));
            }
            let args = call["function"]["arguments"].as_str().unwrap_or("");
            if let (false, Some(Open::Call(_, _, _, so_far))) = (args.is_empty(), &mut self.open) {
                so_far.push_str(args);
                let (oi, id) = (self.done.len(), self.item_id());
                self.event(
                    out,
                    "response.function_call_arguments.delta",
                    json!({"item_id": id, "output_index": oi, "delta": args}),
                );
            }
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            self.finish = Some(f.to_owned());
        }
    }

    fn item_id(&self) -> String {
        format!("item_{}_{}", self.id, self.done.len())
    }

    fn added(&mut self, out: &mut Vec<u8>, item: Value) {
        let oi = self.done.len();
        self.event(
            out,
            "response.output_item.added",
            json!({"output_index": oi, "item": item}),
        );
    }

    fn close(&mut self, out: &mut Vec<u8>) {
        let (oi, id) = (self.done.len(), self.item_id());
        let item = match self.open.take() {
            None => return,
            Some(Open::Text(text)) => {
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                self.event(out, "response.output_text.done", json!({"item_id": id, "output_index": oi, "content_index": 0, "text": text, "logprobs": []}));
                self.event(
                    out,
                    "response.content_part.done",
                    json!({"item_id": id, "output_index": oi, "content_index": 0, "part": part}),
                );
                message_item(&id, &text, "completed")
            }
            Some(Open::Call(_, cid, name, args)) => {
                self.event(
                    out,
                    "response.function_call_arguments.done",
                    json!({"item_id": id, "output_index": oi, "arguments": args}),
                );
                call_item(&id, &cid, &name, &args, "completed")
            }
        };
        self.event(
            out,
            "response.output_item.done",
            json!({"output_index": oi, "item": item}),
        );
        self.done.push(item);
    }

    fn finish(&mut self, out: &mut Vec<u8>) {
        self.close(out);
        let finish = self.finish.clone().unwrap_or_else(|| "stop".to_owned());
        let r = response(
            &self.id,
            &self.model,
            self.created,
            std::mem::take(&mut self.done),
            Some(&finish),
            self.usage.clone(),
        );
        let name = if r["status"] == "completed" {
            "response.completed"
        } else {
            "response.incomplete"
        };
        self.event(out, name, json!({"response": r}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_become_response_events_ending_in_response_completed() {
        let mut e = Encoder::default();
        let mut out = Vec::new();
        for c in [
            json!({"id": "c1", "model": "gpt", "created": 1, "choices": [{"index": 0, "delta": {"content": "Hi"}}]}),
            json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{\"a\""}}]}}]}),
            json!({"id": "c1", "model": "gpt", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]}, "finish_reason": "tool_calls"}]}),
            json!({"id": "c1", "model": "gpt", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}}),
        ] {
            out.extend(e.push(format!("data: {c}\n\n").as_bytes()));
        }
        out.extend(e.push(b"data: [DONE]\n\n"));
        let text = String::from_utf8(out).unwrap();
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(names.first(), Some(&"response.created"));
        assert_eq!(names.last(), Some(&"response.completed"));
        for n in [
            "response.output_item.added",
            "response.output_text.delta",
            "response.function_call_arguments.delta",
            "response.output_item.done",
        ] {
            assert!(names.contains(&n), "{n}");
        }
        let last: Value =
            serde_json::from_str(text.trim_end().rsplit("data: ").next().unwrap()).unwrap();
        assert_eq!(last["response"]["output"][1]["arguments"], "{\"a\":1}");
        assert_eq!(last["response"]["usage"]["total_tokens"], 3);
    }
}
