//! Chat-completions request → Converse request body. Every OpenAI parameter is either mapped or
//! dropped here on purpose, so nothing draws a `ValidationException` the caller did not cause:
//! - mapped: `messages`, system and developer messages (`system`), `max_completion_tokens` /
//!   `max_tokens`, `temperature` (clamped to 0–1), `top_p`, `stop`, `tools`, `tool_choice`;
//! - dropped: everything else (`n`, `seed`, penalties, `logprobs`, `response_format`, `user`,
//!   `parallel_tool_calls`, reasoning settings), which Converse has no common field for.
//!
//! The model id is not in the body: it is in the path (`super::path`).

use super::messages::write_messages;
use super::tools::tool_config;
use super::DEFAULT_MAX_TOKENS;
use crate::api::raw_json::ObjectWriter;
use crate::api::ChatRequest;
use crate::config::CatalogModel;
use serde_json::{json, Map, Value};

/// The Converse request as JSON bytes. `messages` is translated and written one caller message
/// at a time, so no tree of the whole conversation is held; the rest is small and built as a tree.
pub fn body(model: &CatalogModel, req: &ChatRequest) -> Vec<u8> {
    let src = &req.tree_without("messages");
    // Sized for the translated messages up front: blocks add a little wrapping to the caller's
    // text.
    let messages_len = req.raw("messages").map_or(0, str::len);
    let mut bytes = Vec::with_capacity(messages_len + messages_len / 8 + 4_096);
    let mut object = ObjectWriter::new(&mut bytes);
    let conversation = write_messages(req.raw("messages"), object.key("messages"));
    // Writing a Value into a Vec cannot fail.
    if !conversation.system.is_empty() {
        let _ = serde_json::to_writer(object.key("system"), &conversation.system);
    }
    let _ = serde_json::to_writer(object.key("inferenceConfig"), &inference_config(model, src));
    if let Some(tools) = tool_config(src, &conversation.history_tools) {
        let _ = serde_json::to_writer(object.key("toolConfig"), &tools);
    }
    object.close();
    bytes
}

/// `maxTokens` is always sent (from the request, else the model's, else the default), since
/// some Bedrock models' own default is far below what callers expect.
fn inference_config(model: &CatalogModel, src: &Map<String, Value>) -> Value {
    let max_tokens = src
        .get("max_completion_tokens")
        .or_else(|| src.get("max_tokens"))
        .and_then(Value::as_u64)
        .or_else(|| model.max_output_tokens.map(u64::from))
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let mut out = json!({"maxTokens": max_tokens});
    // OpenAI's temperature runs 0–2, Bedrock's 0–1: values above 1 are clamped.
    if let Some(t) = src.get("temperature").and_then(Value::as_f64) {
        out["temperature"] = t.clamp(0.0, 1.0).into();
    }
    if let Some(p) = src.get("top_p").and_then(Value::as_f64) {
        out["topP"] = p.clamp(0.0, 1.0).into();
    }
    if let Some(stop) = stop_sequences(src.get("stop")) {
        out["stopSequences"] = stop;
    }
    out
}

/// A string or an array of strings; empty strings are left out (Converse refuses them).
fn stop_sequences(stop: Option<&Value>) -> Option<Value> {
    let list: Vec<&str> = match stop? {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let list: Vec<&str> = list.into_iter().filter(|s| !s.is_empty()).collect();
    (!list.is_empty()).then(|| json!(list))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
