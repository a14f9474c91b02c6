//! What a traced request's spans read from its bodies: the sampling parameters it asked for, and
//! the served answer's id, model and finish reasons; under `capture_content`, its messages in
//! the GenAI conventions' shape (`[{"role", "parts": [{"type": "text", "content"}…]}]`). Read
//! only for a request that is traced.

use super::request_trace::{RequestParams, ResponseFacts};
use crate::api::ChatRequest;
use crate::surfaces::Surface;
use serde_json::{json, Value};

/// The request's `max_tokens` (or `max_completion_tokens`), `temperature` and `top_p`.
pub fn request_params(chat: &ChatRequest) -> RequestParams {
    let number = |field: &str| chat.raw(field).and_then(|v| v.trim().parse::<f64>().ok());
    let max_tokens = chat
        .raw("max_completion_tokens")
        .or_else(|| chat.raw("max_tokens"))
        .and_then(|v| v.trim().parse::<u64>().ok());
    RequestParams {
        max_tokens,
        temperature: number("temperature"),
        top_p: number("top_p"),
    }
}

fn text_part(text: &str) -> Value {
    json!({"type": "text", "content": text})
}

/// A chat message's content as parts: a string is one text part, each text part of an array
/// one, any other part by its type only.
fn content_parts(content: Option<&Value>, parts: &mut Vec<Value>) {
    match content {
        Some(Value::String(s)) => parts.push(text_part(s)),
        Some(Value::Array(items)) => {
            for item in items {
                let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
                match item.get("text").and_then(Value::as_str) {
                    Some(text) if kind == "text" || kind == "output_text" => {
                        parts.push(text_part(text))
                    }
                    _ => parts.push(json!({"type": kind})),
                }
            }
        }
        _ => {}
    }
}

fn tool_calls(calls: Option<&Value>, parts: &mut Vec<Value>) {
    for call in calls.and_then(Value::as_array).into_iter().flatten() {
        let f = call.get("function");
        parts.push(json!({
            "type": "tool_call",
            "id": call.get("id"),
            "name": f.and_then(|f| f.get("name")),
            "arguments": f.and_then(|f| f.get("arguments")),
        }));
    }
}

/// The request's messages (its chat view), for `gen_ai.input.messages`.
pub fn input_messages(chat: &ChatRequest) -> Option<String> {
    let messages = chat.value("messages")?;
    let out: Vec<Value> = messages
        .as_array()?
        .iter()
        .map(|m| {
            let mut parts = Vec::new();
            content_parts(m.get("content"), &mut parts);
            tool_calls(m.get("tool_calls"), &mut parts);
            json!({"role": m.get("role").and_then(Value::as_str).unwrap_or("user"), "parts": parts})
        })
        .collect();
    serde_json::to_string(&out).ok()
}

/// The served answer's facts from its body as the caller receives it (`surface`'s shape).
pub fn response_facts(surface: Surface, body: &[u8], capture: bool) -> ResponseFacts {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return ResponseFacts::default();
    };
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut facts = ResponseFacts {
        id: text("id"),
        model: text("model"),
        ..ResponseFacts::default()
    };
    let mut output = Vec::new();
    match surface {
        Surface::Chat => {
            for choice in v
                .get("choices")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let reason = choice.get("finish_reason").and_then(Value::as_str);
                facts.finish_reasons.extend(reason.map(str::to_owned));
                let message = choice.get("message");
                let mut parts = Vec::new();
                content_parts(message.and_then(|m| m.get("content")), &mut parts);
                tool_calls(message.and_then(|m| m.get("tool_calls")), &mut parts);
                output.push(json!({"role": "assistant", "parts": parts, "finish_reason": reason}));
            }
        }
        Surface::Messages => {
            let reason = text("stop_reason");
            let mut parts = Vec::new();
            content_parts(v.get("content"), &mut parts);
            output.push(json!({"role": "assistant", "parts": parts, "finish_reason": reason}));
            facts.finish_reasons.extend(reason);
        }
        Surface::Responses => {
            let reason = text("status");
            let mut parts = Vec::new();
            for item in v
                .get("output")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                content_parts(item.get("content"), &mut parts);
            }
            output.push(json!({"role": "assistant", "parts": parts, "finish_reason": reason}));
            facts.finish_reasons.extend(reason);
        }
        Surface::Embeddings => {}
    }
    if capture && !output.is_empty() {
        facts.output_messages = serde_json::to_string(&output).ok();
    }
    facts
}
