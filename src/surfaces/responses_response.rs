//! `chat.completion` → Responses `response` object.

use serde_json::{json, Value};

pub fn response_id(id: &str) -> String {
    format!("resp_{id}")
}

pub fn usage(u: &Value) -> Value {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (i, o) = (n("prompt_tokens"), n("completion_tokens"));
    json!({"input_tokens": i, "input_tokens_details": {"cached_tokens": 0},
           "output_tokens": o, "output_tokens_details": {"reasoning_tokens": 0},
           "total_tokens": i.saturating_add(o)})
}

pub fn message_item(id: &str, text: &str, status: &str) -> Value {
    json!({"type": "message", "id": id, "status": status, "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

pub fn call_item(id: &str, call_id: &Value, name: &Value, arguments: &str, status: &str) -> Value {
    json!({"type": "function_call", "id": id, "call_id": call_id, "name": name,
           "arguments": arguments, "status": status})
}

/// The `response` object; `finish` is the chat finish reason (`None` while in progress).
pub fn response(
    id: &str,
    model: &Value,
    created: u64,
    output: Vec<Value>,
    finish: Option<&str>,
    usage: Value,
) -> Value {
    let (status, incomplete) = match finish {
        None => ("in_progress", Value::Null),
        Some("length") => ("incomplete", json!({"reason": "max_output_tokens"})),
        Some("content_filter") => ("incomplete", json!({"reason": "content_filter"})),
        Some(_) => ("completed", Value::Null),
    };
    json!({
        "id": id, "object": "response", "created_at": created, "status": status, "model": model,
        "output": output, "usage": if finish.is_some() { usage } else { Value::Null },
        "error": null, "incomplete_details": incomplete, "instructions": null, "metadata": {},
        "parallel_tool_calls": true, "tool_choice": "auto", "tools": [], "temperature": null,
        "top_p": null, "text": {"format": {"type": "text"}},
    })
}

pub fn from_chat(bytes: &[u8], now_s: u64) -> Result<Vec<u8>, String> {
    let c = super::chat_answer(bytes)?;
    let choice = &c["choices"][0];
    let m = &choice["message"];
    let base = c["id"].as_str().unwrap_or("");
    let mut output = Vec::new();
    if let Some(t) = m["content"].as_str().filter(|t| !t.is_empty()) {
        output.push(message_item(&format!("msg_{base}"), t, "completed"));
    }
    for (i, call) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
        let f = &call["function"];
        let args = f["arguments"].as_str().unwrap_or("{}");
        output.push(call_item(
            &format!("fc_{base}_{i}"),
            &call["id"],
            &f["name"],
            args,
            "completed",
        ));
    }
    let created = c["created"].as_u64().filter(|c| *c > 0).unwrap_or(now_s);
    let finish = choice["finish_reason"].as_str().unwrap_or("stop");
    let out = response(
        &response_id(base),
        &c["model"],
        created,
        output,
        Some(finish),
        usage(&c["usage"]),
    );
    serde_json::to_vec(&out).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_completion_becomes_a_response_with_message_and_function_call_items() {
        let chat = json!({"id": "c1", "created": 5, "model": "gpt", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": "ok", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4}});
        let r: Value =
            serde_json::from_slice(&from_chat(chat.to_string().as_bytes(), 9).unwrap()).unwrap();
        assert_eq!(
            (
                r["object"].clone(),
                r["status"].clone(),
                r["created_at"].clone()
            ),
            (json!("response"), json!("completed"), json!(5))
        );
        assert_eq!(
            r["output"][0]["content"][0],
            json!({"type": "output_text", "text": "ok", "annotations": []})
        );
        assert_eq!(r["output"][1]["call_id"], "call_1");
        assert_eq!(r["usage"]["total_tokens"], 7);
    }
}
