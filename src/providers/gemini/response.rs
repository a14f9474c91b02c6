//! `GenerateContentResponse` → `chat.completion`.

use super::parts::{self, Piece};
use super::{finish_reason, is_refusal_reason};
use crate::usage::TokenCounts;
use serde::Deserialize;
use serde_json::{json, Value};
use std::borrow::Cow;

/// `usageMetadata` in chat terms, and the counts it reports (`None`: it names no tokens).
/// Prompt = `promptTokenCount` (which already includes `cachedContentTokenCount`) plus
/// `toolUsePromptTokenCount` (input the model read from its own tools, billed as input);
/// completion = `candidatesTokenCount` + `thoughtsTokenCount` (thinking is billed as output);
/// cached = `cachedContentTokenCount`, shown as `prompt_tokens_details.cached_tokens` when
/// reported.
pub fn usage(meta: &Value) -> (Value, Option<TokenCounts>) {
    let n = |k: &str| meta.get(k).and_then(Value::as_u64);
    let prompt = n("promptTokenCount")
        .unwrap_or(0)
        .saturating_add(n("toolUsePromptTokenCount").unwrap_or(0));
    let thoughts = n("thoughtsTokenCount");
    let completion = n("candidatesTokenCount")
        .unwrap_or(0)
        .saturating_add(thoughts.unwrap_or(0));
    let cached = n("cachedContentTokenCount");
    let mut out = json!({
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt.saturating_add(completion),
    });
    if let Some(c) = cached {
        out["prompt_tokens_details"] = json!({"cached_tokens": c.min(prompt)});
    }
    if let Some(t) = thoughts {
        out["completion_tokens_details"] = json!({"reasoning_tokens": t});
    }
    let known = n("promptTokenCount").is_some() || n("candidatesTokenCount").is_some();
    let counts =
        known.then(|| TokenCounts::new(prompt, completion, cached.unwrap_or(0).min(prompt)));
    (out, counts)
}

/// `chatcmpl-{responseId}`; an answer without one is named by the second it was stamped.
pub(super) fn completion_id(response_id: &str, created: u64) -> String {
    if response_id.is_empty() {
        format!("chatcmpl-gemini-{created}")
    } else {
        format!("chatcmpl-{response_id}")
    }
}

/// The chat completion and the tokens the answer reported. `created` is the epoch second to
/// stamp (Gemini answers carry none).
pub fn read(bytes: &[u8], created: u64) -> Result<(Vec<u8>, Option<TokenCounts>), String> {
    let answer: Value =
        serde_json::from_slice(bytes).map_err(|_| "body is not valid JSON".to_owned())?;
    let shaped = answer.get("candidates").is_some_and(Value::is_array)
        || answer.get("promptFeedback").is_some_and(Value::is_object);
    if !shaped {
        return Err("body is not a generateContent response".to_owned());
    }
    let response_id = answer
        .get("responseId")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut text = String::new();
    let mut thinking = String::new();
    let mut tool_calls: Vec<Value> = Vec::new();
    for part in parts::parts(parts::candidate(&answer)) {
        match parts::piece(part, response_id, tool_calls.len()) {
            Piece::Text(t) => text.push_str(t),
            Piece::Thought(t) => thinking.push_str(t),
            Piece::Call(call) => tool_calls.push(call),
            Piece::Other => {}
        }
    }
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { text.into() },
    });
    let finish = finish_reason(
        parts::finish(&answer).unwrap_or("STOP"),
        !tool_calls.is_empty(),
    );
    if !tool_calls.is_empty() {
        message["tool_calls"] = tool_calls.into();
    }
    // Reasoning comes back the way the Anthropic translation shows it. No `thinking_blocks`:
    // Gemini's thought text is not replayable (its signatures ride on the tool call ids).
    if !thinking.is_empty() {
        message["reasoning_content"] = thinking.into();
    }
    let (usage, tokens) = usage(answer.get("usageMetadata").unwrap_or(&Value::Null));
    let mut out = json!({
        "id": completion_id(response_id, created),
        "object": "chat.completion",
        "created": created,
        "model": answer.get("modelVersion").cloned().unwrap_or_default(),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
    });
    // Without reported tokens the usage is left out, so the gateway estimates it.
    if tokens.is_some() {
        out["usage"] = usage;
    }
    let chat = serde_json::to_vec(&out).map_err(|e| e.to_string())?;
    Ok((chat, tokens))
}

#[derive(Deserialize)]
struct Refusal<'a> {
    #[serde(borrow, default, rename = "promptFeedback")]
    prompt_feedback: Option<Feedback<'a>>,
    #[serde(borrow, default)]
    candidates: Option<Vec<Candidate<'a>>>,
}

#[derive(Deserialize)]
struct Feedback<'a> {
    #[serde(borrow, default, rename = "blockReason")]
    block_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Candidate<'a> {
    #[serde(borrow, default, rename = "finishReason")]
    finish_reason: Option<Cow<'a, str>>,
}

/// Whether a whole 2xx answer is a filter's refusal: the prompt was blocked
/// (`promptFeedback.blockReason`), or the first candidate finished for a safety, recitation,
/// blocklist, prohibited-content or SPII reason, whatever content came before it. Only those
/// members are read; serde skips the rest of the answer.
pub fn is_refusal(bytes: &[u8]) -> bool {
    let Ok(answer) = serde_json::from_slice::<Refusal<'_>>(bytes) else {
        return false;
    };
    let blocked = answer
        .prompt_feedback
        .and_then(|f| f.block_reason)
        .is_some_and(|r| !r.is_empty() && r != "BLOCKED_REASON_UNSPECIFIED");
    let filtered = answer
        .candidates
        .as_ref()
        .and_then(|c| c.first())
        .and_then(|c| c.finish_reason.as_deref())
        .is_some_and(is_refusal_reason);
    blocked || filtered
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
