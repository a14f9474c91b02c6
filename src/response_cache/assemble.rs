//! A streamed answer put back together: the response cache stores every answer in the
//! surface's non-streamed form, so a streamed miss is assembled from the chat chunks the relay
//! forwarded (a copy; nothing is held back from the caller) and stored as the `chat.completion`
//! they spell, or its Messages or Responses translation.
//!
//! Only a whole stream is assembled: one that reached `[DONE]`, within `MAX_ENTRY_BYTES`. A
//! choice keeps the `finish_reason` its stream gave (`null` if none: nothing is made up). Anything else (native Anthropic events, an error event, a
//! chunk that is not JSON) yields nothing, and nothing is stored.

use crate::config::SortedMap;
use crate::response_cache::stored::MAX_ENTRY_BYTES;
use crate::stream::sse::{EventKind, SseParser};
use crate::surfaces::Surface;
use crate::usage::TokenCounts;
use serde_json::{json, Map, Value};

#[derive(Debug, Default)]
struct Call {
    id: Value,
    name: String,
    arguments: String,
}

#[derive(Debug, Default)]
struct Choice {
    role: Option<String>,
    content: Option<String>,
    reasoning: Option<String>,
    calls: SortedMap<u64, Call>,
    finish: Value,
}

#[derive(Debug, Default)]
pub struct ChatAssembler {
    parser: SseParser,
    head: Map<String, Value>,
    choices: SortedMap<u64, Choice>,
    usage: Option<Value>,
    done: bool,
    /// Past the size limit, or something it cannot read: nothing will be stored.
    spoiled: bool,
    seen: usize,
}

fn append(slot: &mut Option<String>, v: &Value) {
    if let Some(s) = v.as_str() {
        slot.get_or_insert_with(String::new).push_str(s);
    }
}

impl ChatAssembler {
    /// Chat chunks as the relay forwarded them.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.spoiled {
            return;
        }
        self.seen = self.seen.saturating_add(bytes.len());
        if self.seen > MAX_ENTRY_BYTES.saturating_mul(2) {
            return self.spoil();
        }
        let Ok(events) = self.parser.push(bytes) else {
            return self.spoil();
        };
        for e in events {
            match e.kind {
                EventKind::Done => self.done = true,
                EventKind::Empty => {}
                EventKind::Error(_) => self.spoil(),
                EventKind::Data => match serde_json::from_str::<Value>(&e.data) {
                    Ok(c) if c.get("choices").is_some() => self.on_chunk(&c),
                    _ => self.spoil(),
                },
            }
        }
    }

    fn spoil(&mut self) {
        self.spoiled = true;
        self.choices.clear();
    }

    fn on_chunk(&mut self, c: &Value) {
        for field in ["id", "created", "model", "system_fingerprint"] {
            if let Some(v) = c.get(field).filter(|v| !v.is_null()) {
                self.head.entry(field).or_insert_with(|| v.clone());
            }
        }
        if let Some(u) = c.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        for (i, ch) in c["choices"].as_array().into_iter().flatten().enumerate() {
            let index = ch["index"].as_u64().unwrap_or(i as u64);
            let acc = self.choices.entry(index).or_default();
            let d = &ch["delta"];
            if let Some(r) = d["role"].as_str() {
                acc.role = Some(r.to_owned());
            }
            append(&mut acc.content, &d["content"]);
            append(&mut acc.reasoning, &d["reasoning_content"]);
            for (j, call) in d["tool_calls"].as_array().into_iter().flatten().enumerate() {
                let at = call["index"].as_u64().unwrap_or(j as u64);
                let slot = acc.calls.entry(at).or_default();
                if let Some(id) = call.get("id").filter(|v| !v.is_null()) {
                    slot.id = id.clone();
                }
                let f = &call["function"];
                slot.name.push_str(f["name"].as_str().unwrap_or(""));
                slot.arguments
                    .push_str(f["arguments"].as_str().unwrap_or(""));
            }
            if let Some(f) = ch.get("finish_reason").filter(|f| !f.is_null()) {
                acc.finish = f.clone();
            }
        }
    }

    /// The whole answer as a `chat.completion`, with the usage the relay read (`tokens`) when
    /// the caller's stream carried none.
    pub fn completion(self, tokens: Option<TokenCounts>) -> Option<Vec<u8>> {
        if !self.done || self.spoiled || self.choices.is_empty() {
            return None;
        }
        let choices: Vec<Value> = self
            .choices
            .into_iter()
            .map(|(index, c)| {
                let mut message = json!({
                    "role": c.role.unwrap_or_else(|| "assistant".to_owned()),
                    "content": c.content,
                });
                if let Some(r) = c.reasoning {
                    message["reasoning_content"] = r.into();
                }
                if !c.calls.is_empty() {
                    let calls: Vec<Value> = c
                        .calls
                        .into_values()
                        .map(|k| json!({"id": k.id, "type": "function",
                                        "function": {"name": k.name, "arguments": k.arguments}}))
                        .collect();
                    message["tool_calls"] = calls.into();
                }
                json!({"index": index, "message": message, "logprobs": null, "finish_reason": c.finish})
            })
            .collect();
        let mut out = self.head;
        out.insert("object".into(), "chat.completion".into());
        out.insert("choices".into(), choices.into());
        let usage = self.usage.or_else(|| {
            tokens.map(|t| {
                json!({"prompt_tokens": t.prompt, "completion_tokens": t.completion,
                       "total_tokens": t.total()})
            })
        });
        if let Some(u) = usage {
            out.insert("usage".into(), u);
        }
        let bytes = serde_json::to_vec(&Value::Object(out)).ok()?;
        (bytes.len() <= MAX_ENTRY_BYTES).then_some(bytes)
    }

    /// The whole answer in `surface`'s non-streamed form.
    pub fn answer(
        self,
        surface: Surface,
        tokens: Option<TokenCounts>,
        now_s: u64,
    ) -> Option<Vec<u8>> {
        let chat = self.completion(tokens)?;
        match surface {
            Surface::Chat => Some(chat),
            Surface::Messages => crate::surfaces::messages_response::from_chat(&chat).ok(),
            Surface::Responses => crate::surfaces::responses_response::from_chat(&chat, now_s).ok(),
            Surface::Embeddings => None,
        }
    }
}

#[cfg(test)]
#[path = "assemble_tests.rs"]
mod tests;
