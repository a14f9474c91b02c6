//! Messages response → `chat.completion`.

use super::finish_reason;
use crate::usage::wire::{write_split, WireUsage};
use crate::usage::TokenCounts;
use serde_json::{json, Value};

/// Messages usage in chat terms: the prompt counts cache reads and writes too (Anthropic's
/// `input_tokens` leaves them out), cache reads show as `prompt_tokens_details.cached_tokens`
/// when the answer reported them, and cache writes keep Anthropic's names (`chat_writes`), so
/// `usage::wire` reads the same counts back from the chat shape.
pub fn usage(u: &Value, output_tokens: u64) -> Value {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let tier = |k: &str| {
        u.get("cache_creation")
            .and_then(|c| c.get(k))
            .and_then(Value::as_u64)
    };
    let (w5, w1h) = write_split(
        u.get("cache_creation_input_tokens").and_then(Value::as_u64),
        tier("ephemeral_5m_input_tokens").unwrap_or(0),
        tier("ephemeral_1h_input_tokens").unwrap_or(0),
    );
    // Saturating: the counts are the answer's (or a stored answer's) data, never trusted.
    let prompt = n("input_tokens")
        .saturating_add(w5)
        .saturating_add(w1h)
        .saturating_add(n("cache_read_input_tokens"));
    let total = prompt.saturating_add(output_tokens);
    let mut out =
        json!({"prompt_tokens": prompt, "completion_tokens": output_tokens, "total_tokens": total});
    if u.get("cache_read_input_tokens").is_some_and(Value::is_u64) {
        out["prompt_tokens_details"] = json!({"cached_tokens": n("cache_read_input_tokens")});
    }
    chat_writes(&mut out, (w5, w1h));
    out
}

/// The cache writes (5-minute, 1-hour) of a chat-shaped usage, under Anthropic's names:
/// `cache_creation_input_tokens` and its `cache_creation` breakdown. Written only when there
/// are writes, so an answer without any translates as it always did.
pub fn chat_writes(out: &mut Value, (w5, w1h): (u64, u64)) {
    if w5.saturating_add(w1h) == 0 {
        return;
    }
    out["cache_creation_input_tokens"] = w5.saturating_add(w1h).into();
    out["cache_creation"] =
        json!({"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1h});
}

/// `created` is the epoch second to stamp (Messages responses carry none).
pub fn to_openai(bytes: &[u8], created: u64) -> Result<Vec<u8>, String> {
    read(bytes, created).map(|(chat, _)| chat)
}

/// The chat completion and the tokens the answer reported (read from the tree this
/// translation builds anyway).
pub fn read(bytes: &[u8], created: u64) -> Result<(Vec<u8>, Option<TokenCounts>), String> {
    let msg: Value =
        serde_json::from_slice(bytes).map_err(|_| "body is not valid JSON".to_owned())?;
    if msg.get("type").and_then(Value::as_str) != Some("message") {
        return Err("body is not a Messages response".to_owned());
    }
    let mut text = String::new();
    let mut thinking = String::new();
    let mut thinking_blocks: Vec<Value> = Vec::new();
    let mut tool_calls: Vec<Value> = Vec::new();
    for block in msg
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => tool_calls.push(json!({
                "id": block.get("id").cloned().unwrap_or_default(),
                "type": "function",
                "function": {
                    "name": block.get("name").cloned().unwrap_or_default(),
                    "arguments": block.get("input").map(Value::to_string).unwrap_or_else(|| "{}".into()),
                },
            })),
            Some("thinking") => {
                thinking.push_str(block.get("thinking").and_then(Value::as_str).unwrap_or(""));
                thinking_blocks.push(block.clone());
            }
            Some("redacted_thinking") => thinking_blocks.push(block.clone()),
            _ => {}
        }
    }
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { text.into() },
    });
    if !tool_calls.is_empty() {
        message["tool_calls"] = tool_calls.into();
    }
    // Reasoning comes back the way OpenAI-compatible reasoning APIs show it; the signed blocks ride
    // along so a later turn to Anthropic can replay them.
    if !thinking.is_empty() {
        message["reasoning_content"] = thinking.into();
    }
    if !thinking_blocks.is_empty() {
        message["thinking_blocks"] = thinking_blocks.into();
    }
    let stop = msg
        .get("stop_reason")
        .and_then(Value::as_str)
        .unwrap_or("end_turn");
    let u = msg.get("usage").cloned().unwrap_or_default();
    let tokens = serde_json::from_value::<WireUsage>(u.clone())
        .ok()
        .and_then(|w| w.counts());
    let output = u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0);
    let out = json!({
        "id": msg.get("id").cloned().unwrap_or_default(),
        "object": "chat.completion",
        "created": created,
        "model": msg.get("model").cloned().unwrap_or_default(),
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(stop), "logprobs": null}],
        "usage": usage(&u, output),
    });
    let chat = serde_json::to_vec(&out).map_err(|e| e.to_string())?;
    Ok((chat, tokens))
}
