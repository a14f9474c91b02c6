//! A cached answer served as a stream: the stored answer is in the surface's
//! non-streamed form; a streamed request that hits gets a well-formed stream of its surface built
//! from it, which the official SDKs reassemble to the same answer.
//!
//! Chat completions: one chunk per choice with its whole message as the delta (role, content,
//! tool calls with their `index`), one chunk with its `finish_reason`, the usage chunk when the
//! request asked for it (`stream_options.include_usage`), then `[DONE]`. Messages and Responses:
//! the stored answer read as a chat completion, streamed so, then put through the surface's own
//! stream encoder (the one every OpenAI-compatible candidate's stream goes through), so a hit's
//! events are the events a miss would send.
//!
//! The stored answer is data read back, not trusted: whatever shape it has, each function here
//! returns an error (the hit then is a miss), never a panic.

use crate::surfaces::{Encoder, Surface};
use serde_json::{json, Map, Value};

/// The stored answer of `surface` as that surface's stream.
pub fn streamed(
    surface: Surface,
    stored: &[u8],
    include_usage: bool,
    input_estimate: u64,
    now_s: u64,
) -> Result<Vec<u8>, String> {
    match surface {
        Surface::Chat => chat_sse(stored, include_usage),
        Surface::Messages => {
            let chat = crate::providers::anthropic::response::to_openai(stored, now_s)?;
            Ok(Encoder::messages(input_estimate).push(chat_sse(&chat, true)?))
        }
        Surface::Responses => {
            let chat = responses_to_chat(stored)?;
            Ok(Encoder::responses().push(chat_sse(&chat, true)?))
        }
        Surface::Embeddings => Err("embeddings have no streamed form".to_owned()),
    }
}

fn sse(out: &mut Vec<u8>, data: &Value) {
    out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
}

/// A `chat.completion` as its `chat.completion.chunk` stream, ending in `[DONE]`.
pub fn chat_sse(completion: &[u8], include_usage: bool) -> Result<Vec<u8>, String> {
    let c: Value = serde_json::from_slice(completion).map_err(|_| "stored answer is not JSON")?;
    let choices = c["choices"]
        .as_array()
        .ok_or("stored answer has no choices")?;
    let mut head = Map::new();
    head.insert("id".into(), c["id"].clone());
    head.insert("object".into(), "chat.completion.chunk".into());
    head.insert("created".into(), c["created"].clone());
    head.insert("model".into(), c["model"].clone());
    if let Some(fp) = c.get("system_fingerprint") {
        head.insert("system_fingerprint".into(), fp.clone());
    }
    let chunk = |choices: Value| {
        let mut m = head.clone();
        m.insert("choices".into(), choices);
        Value::Object(m)
    };
    let mut out = Vec::new();
    for (i, choice) in choices.iter().enumerate() {
        let index = choice.get("index").cloned().unwrap_or_else(|| i.into());
        let msg = &choice["message"];
        let mut delta = Map::new();
        delta.insert(
            "role".into(),
            msg.get("role").cloned().unwrap_or("assistant".into()),
        );
        for field in ["content", "refusal", "reasoning_content"] {
            if let Some(v) = msg.get(field).filter(|v| !v.is_null()) {
                delta.insert(field.into(), v.clone());
            }
        }
        if let Some(calls) = msg["tool_calls"].as_array().filter(|a| !a.is_empty()) {
            let calls = calls
                .iter()
                .enumerate()
                .map(|(j, call)| {
                    // Stored data is read, never trusted: a call that is no object is an error
                    // (the hit a miss), where indexing into it would panic.
                    let mut call = call
                        .as_object()
                        .cloned()
                        .ok_or("stored tool call is not an object")?;
                    call.insert("index".into(), j.into());
                    Ok(Value::Object(call))
                })
                .collect::<Result<Vec<Value>, &str>>()?;
            delta.insert("tool_calls".into(), calls.into());
        }
        sse(
            &mut out,
            &chunk(
                json!([{"index": index, "delta": delta, "logprobs": null, "finish_reason": null}]),
            ),
        );
        sse(
            &mut out,
            &chunk(
                json!([{"index": index, "delta": {}, "logprobs": null, "finish_reason": choice["finish_reason"]}]),
            ),
        );
    }
    if include_usage {
        if let Some(usage) = c.get("usage").filter(|u| u.is_object()) {
            let mut last = chunk(json!([]));
            last["usage"] = usage.clone();
            sse(&mut out, &last);
        }
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    Ok(out)
}

/// A Responses `response` read back as the chat completion it was made from
/// (`responses_response::from_chat`): its text, its function calls, its finish and usage.
fn responses_to_chat(stored: &[u8]) -> Result<Vec<u8>, String> {
    let r: Value = serde_json::from_slice(stored).map_err(|_| "stored answer is not JSON")?;
    let id = r["id"].as_str().unwrap_or("");
    let id = id.strip_prefix("resp_").unwrap_or(id);
    let mut text = String::new();
    let mut calls = Vec::new();
    for item in r["output"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("message") => {
                for part in item["content"].as_array().into_iter().flatten() {
                    text.push_str(part["text"].as_str().unwrap_or(""));
                }
            }
            Some("function_call") => calls.push(json!({
                "id": item["call_id"], "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"]},
            })),
            _ => {}
        }
    }
    let finish = match (
        r["status"].as_str(),
        r["incomplete_details"]["reason"].as_str(),
    ) {
        (Some("incomplete"), Some("max_output_tokens")) => "length",
        (Some("incomplete"), Some("content_filter")) => "content_filter",
        _ if !calls.is_empty() => "tool_calls",
        _ => "stop",
    };
    let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { text.into() }});
    if !calls.is_empty() {
        message["tool_calls"] = calls.into();
    }
    let u = &r["usage"];
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let total = n("input_tokens").saturating_add(n("output_tokens"));
    let chat = json!({
        "id": id, "object": "chat.completion", "created": r["created_at"], "model": r["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": n("input_tokens"), "completion_tokens": n("output_tokens"),
                  "total_tokens": total},
    });
    serde_json::to_vec(&chat).map_err(|e| e.to_string())
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
