//! Converse response → `chat.completion`.

use super::finish_reason;
use crate::providers::anthropic::response::chat_writes;
use crate::usage::wire::write_split;
use crate::usage::TokenCounts;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// Converse usage in chat terms: the prompt counts cache reads and writes too (`inputTokens`
/// leaves them out, as Anthropic's `input_tokens` does), cache reads show as
/// `prompt_tokens_details.cached_tokens` when the answer reported them, and cache writes as an
/// Anthropic answer's do (`anthropic::response::chat_writes`).
pub fn usage(u: &Value) -> Value {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (w5, w1h) = writes(u);
    // Saturating: the counts are the answer's data, never trusted.
    let prompt = n("inputTokens")
        .saturating_add(n("cacheReadInputTokens"))
        .saturating_add(w5)
        .saturating_add(w1h);
    let completion = n("outputTokens");
    let mut out = json!({"prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt.saturating_add(completion)});
    if u.get("cacheReadInputTokens").is_some_and(Value::is_u64) {
        out["prompt_tokens_details"] = json!({"cached_tokens": n("cacheReadInputTokens")});
    }
    chat_writes(&mut out, (w5, w1h));
    out
}

/// The cache writes as (5-minute, 1-hour): `cacheWriteInputTokens`, split by the `cacheDetails`
/// entries (`{"inputTokens", "ttl": "5m" | "1h"}`); without them, every write is 5-minute.
fn writes(u: &Value) -> (u64, u64) {
    let (mut five, mut hour) = (0u64, 0u64);
    for d in u
        .get("cacheDetails")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let n = d.get("inputTokens").and_then(Value::as_u64).unwrap_or(0);
        match d.get("ttl").and_then(Value::as_str) {
            Some("1h") => hour = hour.saturating_add(n),
            _ => five = five.saturating_add(n),
        }
    }
    let total = u.get("cacheWriteInputTokens").and_then(Value::as_u64);
    write_split(total, five, hour)
}

/// The counts for metering, or `None` when the answer named no tokens (unknown, never zero).
pub fn counts(u: &Value) -> Option<TokenCounts> {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    if n("inputTokens").is_none() && n("outputTokens").is_none() {
        return None;
    }
    let read = n("cacheReadInputTokens").unwrap_or(0);
    let (w5, w1h) = writes(u);
    let prompt = n("inputTokens")
        .unwrap_or(0)
        .saturating_add(read)
        .saturating_add(w5)
        .saturating_add(w1h);
    Some(TokenCounts::new(prompt, n("outputTokens").unwrap_or(0), read).with_writes(w5, w1h))
}

/// The chat completion and the tokens the answer reported. A Converse answer carries no id and
/// no model name: the id is derived from the answer's bytes (pure code has no randomness), the
/// model is left empty; `read_named` takes both when the caller has them.
pub fn read(bytes: &[u8], created: u64) -> Result<(Vec<u8>, Option<TokenCounts>), String> {
    let id = format!(
        "chatcmpl-{}",
        hex::encode(Sha256::digest(bytes).get(..12).unwrap_or_default())
    );
    read_named(bytes, created, &id, "")
}

/// `read` with the completion's `id` and `model` given.
pub fn read_named(
    bytes: &[u8],
    created: u64,
    id: &str,
    model: &str,
) -> Result<(Vec<u8>, Option<TokenCounts>), String> {
    let answer: Value =
        serde_json::from_slice(bytes).map_err(|_| "body is not valid JSON".to_owned())?;
    let Some(content) = answer
        .get("output")
        .and_then(|o| o.get("message"))
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
    else {
        return Err("body is not a Converse response".to_owned());
    };
    let stop = answer
        .get("stopReason")
        .and_then(Value::as_str)
        .unwrap_or("end_turn");
    let finish = finish_reason(stop).ok_or_else(|| format!("Bedrock stopped with {stop}"))?;
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut tool_calls: Vec<Value> = Vec::new();
    for block in content {
        if let Some(t) = block.get("text").and_then(Value::as_str) {
            text.push_str(t);
        } else if let Some(call) = block.get("toolUse") {
            tool_calls.push(json!({
                "id": call.get("toolUseId").cloned().unwrap_or_default(),
                "type": "function",
                "function": {
                    "name": call.get("name").cloned().unwrap_or_default(),
                    "arguments": call.get("input").map_or_else(|| "{}".to_owned(), Value::to_string),
                },
            }));
        } else if let Some(t) = block
            .get("reasoningContent")
            .and_then(|r| r.get("reasoningText"))
            .and_then(|r| r.get("text"))
            .and_then(Value::as_str)
        {
            reasoning.push_str(t);
        }
    }
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { text.into() },
    });
    if !tool_calls.is_empty() {
        message["tool_calls"] = tool_calls.into();
    }
    if !reasoning.is_empty() {
        message["reasoning_content"] = reasoning.into();
    }
    let u = answer.get("usage").cloned().unwrap_or_default();
    let out = json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
        "usage": usage(&u),
    });
    let chat = serde_json::to_vec(&out).map_err(|e| e.to_string())?;
    Ok((chat, counts(&u)))
}

#[derive(Deserialize)]
struct Stop<'a> {
    #[serde(rename = "stopReason", borrow)]
    stop_reason: Option<Cow<'a, str>>,
}

/// Whether a whole 2xx Converse answer is a safety refusal: it stopped for a content filter or
/// a guardrail, whatever content came before. Only `stopReason` is read.
pub fn is_refusal(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Stop<'_>>(bytes).is_ok_and(|s| {
        matches!(
            s.stop_reason.as_deref(),
            Some("content_filtered" | "guardrail_intervened")
        )
    })
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
