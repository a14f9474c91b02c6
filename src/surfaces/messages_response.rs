//! `chat.completion` → Messages object, for answers from OpenAI-compatible candidates.

use serde_json::{json, Value};

/// `finish_reason` → `stop_reason` (the reverse of `providers::anthropic::finish_reason`).
pub fn stop_reason(finish: &str) -> &'static str {
    match finish {
        "length" => "max_tokens",
        "tool_calls" | "function_call" => "tool_use",
        "content_filter" => "refusal",
        _ => "end_turn",
    }
}

/// A chat id as a Messages id.
pub fn message_id(id: &str) -> String {
    if id.starts_with("msg_") {
        id.to_owned()
    } else {
        format!("msg_{id}")
    }
}

pub fn usage(u: &Value) -> Value {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    json!({"input_tokens": n("prompt_tokens"), "output_tokens": n("completion_tokens")})
}

pub fn from_chat(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let c = super::chat_answer(bytes)?;
    let choice = &c["choices"][0];
    let m = &choice["message"];
    let mut content: Vec<Value> = Vec::new();
    // Signed blocks (from an Anthropic answer translated to chat) come back as they were;
    // other reasoning as an unsigned thinking block.
    match m.get("thinking_blocks").and_then(Value::as_array) {
        Some(blocks) => content.extend(blocks.iter().cloned()),
        None => {
            if let Some(r) = m.get("reasoning_content").and_then(Value::as_str) {
                content.push(json!({"type": "thinking", "thinking": r, "signature": ""}));
            }
        }
    }
    if let Some(t) = m
        .get("content")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        content.push(json!({"type": "text", "text": t}));
    }
    for call in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let f = &call["function"];
        let input = f["arguments"]
            .as_str()
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        content
            .push(json!({"type": "tool_use", "id": call["id"], "name": f["name"], "input": input}));
    }
    let out = json!({
        "id": message_id(c["id"].as_str().unwrap_or("")),
        "type": "message",
        "role": "assistant",
        "model": c["model"],
        "content": content,
        "stop_reason": stop_reason(choice["finish_reason"].as_str().unwrap_or("stop")),
        "stop_sequence": null,
        "usage": usage(&c["usage"]),
    });
    serde_json::to_vec(&out).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_completion_with_tool_calls_becomes_a_message_with_tool_use_blocks() {
        let chat = json!({"id": "chatcmpl-1", "model": "gpt", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}});
        let m: Value =
            serde_json::from_slice(&from_chat(chat.to_string().as_bytes()).unwrap()).unwrap();
        assert_eq!(m["type"], "message");
        assert_eq!(m["id"], "msg_chatcmpl-1");
        assert_eq!(
            m["content"][0],
            json!({"type": "text", "text": "Let me look."})
        );
        assert_eq!(m["content"][1]["input"], json!({"city": "Oslo"}));
        assert_eq!(m["stop_reason"], "tool_use");
        assert_eq!(m["usage"], json!({"input_tokens": 3, "output_tokens": 4}));
    }

    #[test]
    fn a_body_without_choices_is_the_candidates_failure() {
        assert!(from_chat(b"{}").is_err());
    }
}
