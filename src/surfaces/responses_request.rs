//! Responses request (the stateless subset) → chat-completions request. What needs state the
//! gateway does not keep is refused with a 400 that says so.

use crate::api::{ApiError, ChatRequest, ErrorKind};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

fn stateless(param: &str, what: &str) -> ApiError {
    ApiError::new(ErrorKind::UnsupportedParameter,
        format!("{what} is not supported: the gateway keeps no conversation state, so send the whole conversation in 'input'."),
    )
    .with_param(param)
}

pub fn to_chat(raw: &ChatRequest) -> Result<Vec<u8>, ApiError> {
    if raw.raw("previous_response_id").is_some() {
        return Err(stateless("previous_response_id", "'previous_response_id'"));
    }
    if raw.raw("store") == Some("true") {
        return Err(stateless("store", "'store: true'"));
    }
    if raw.raw("conversation").is_some() {
        return Err(stateless("conversation", "'conversation'"));
    }
    let mut out = Map::new();
    out.insert("model".into(), raw.model.clone().into());
    let mut messages: Vec<Value> = Vec::new();
    if let Some(Value::String(s)) = raw.value("instructions") {
        messages.push(json!({"role": "system", "content": s}));
    }
    match raw.raw("input") {
        None => {}
        Some(text) if text.starts_with('"') => {
            let s: String = serde_json::from_str(text).map_err(|_| invalid_input())?;
            messages.push(json!({"role": "user", "content": s}));
        }
        Some(list) => {
            let items: Vec<&RawValue> = serde_json::from_str(list).map_err(|_| invalid_input())?;
            for item in items {
                let v: Value = serde_json::from_str(item.get()).map_err(|_| invalid_input())?;
                input_item(&v, &mut messages);
            }
        }
    }
    out.insert("messages".into(), messages.into());
    if let Some(Value::Array(tools)) = raw.value("tools") {
        let mut list = Vec::new();
        for t in tools {
            if t.get("type").and_then(Value::as_str) != Some("function") {
                let kind = t.get("type").and_then(Value::as_str).unwrap_or("unknown");
                return Err(ApiError::new(ErrorKind::UnsupportedTool,
                    format!("Built-in tool '{kind}' is not supported: the gateway serves function tools only."),
                )
                .with_param("tools"));
            }
            let mut f = json!({"name": t["name"], "parameters": t.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object"}))});
            for k in ["description", "strict"] {
                if let Some(v) = t.get(k) {
                    f[k] = v.clone();
                }
            }
            list.push(json!({"type": "function", "function": f}));
        }
        if !list.is_empty() {
            out.insert("tools".into(), list.into());
        }
    }
    match raw.value("tool_choice") {
        Some(Value::String(s)) => {
            out.insert("tool_choice".into(), s.into());
        }
        Some(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("function") => {
            out.insert(
                "tool_choice".into(),
                json!({"type": "function", "function": {"name": o.get("name")}}),
            );
        }
        _ => {}
    }
    for (from, to) in [
        ("max_output_tokens", "max_tokens"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("parallel_tool_calls", "parallel_tool_calls"),
        ("user", "user"),
        ("stream", "stream"),
    ] {
        if let Some(v) = raw.value(from) {
            out.insert(to.into(), v);
        }
    }
    if raw.stream {
        out.insert("stream_options".into(), json!({"include_usage": true}));
    }
    serde_json::to_vec(&Value::Object(out)).map_err(|_| ApiError::internal())
}

fn invalid_input() -> ApiError {
    ApiError::new(
        ErrorKind::InvalidType,
        "'input' must be a string or an array of input items.",
    )
    .with_param("input")
}

fn text_of(content: &Value) -> Value {
    match content {
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            texts.join("").into()
        }
        other => other.clone(),
    }
}

/// Input content parts → chat content parts (text and images).
fn parts(content: &Value) -> Value {
    let Value::Array(list) = content else {
        return content.clone();
    };
    let out: Vec<Value> = list
        .iter()
        .filter_map(|p| match p.get("type").and_then(Value::as_str)? {
            "input_text" | "output_text" | "text" => {
                Some(json!({"type": "text", "text": p.get("text")?}))
            }
            "input_image" => {
                Some(json!({"type": "image_url", "image_url": {"url": p.get("image_url")?}}))
            }
            _ => None,
        })
        .collect();
    out.into()
}

fn input_item(v: &Value, out: &mut Vec<Value>) {
    match v.get("type").and_then(Value::as_str).unwrap_or("message") {
        "message" => {
            let role = v.get("role").and_then(Value::as_str).unwrap_or("user");
            let content = v.get("content").cloned().unwrap_or_default();
            let content = if role == "assistant" { text_of(&content) } else { parts(&content) };
            out.push(json!({"role": role, "content": content}));
        }
        "function_call" => {
            let call = json!({"id": v["call_id"], "type": "function",
                "function": {"name": v["name"], "arguments": v["arguments"]}});
            // Calls of one turn join the assistant message before them.
            match out.last_mut() {
                Some(last) if last["role"] == "assistant" => {
                    match last.get_mut("tool_calls").and_then(Value::as_array_mut) {
                        Some(calls) => calls.push(call),
                        None => last["tool_calls"] = json!([call]),
                    }
                }
                _ => out.push(json!({"role": "assistant", "content": null, "tool_calls": [call]})),
            }
        }
        "function_call_output" => out.push(json!({"role": "tool", "tool_call_id": v["call_id"],
            "content": match &v["output"] { Value::String(s) => s.clone(), other => other.to_string() }})),
        // Reasoning items and anything newer carry nothing a chat model can take back.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(v: Value) -> Result<Value, ApiError> {
        let raw = ChatRequest::parse(v.to_string().as_bytes()).unwrap();
        to_chat(&raw).map(|b| serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn a_function_call_round_trip_becomes_tool_calls_and_a_tool_message() {
        let c = chat(
            json!({"model": "m", "instructions": "Be brief.", "max_output_tokens": 50,
            "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
            "tool_choice": {"type": "function", "name": "f"},
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "go"}]},
                {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "done"}]}),
        )
        .unwrap();
        assert_eq!(
            c["messages"][0],
            json!({"role": "system", "content": "Be brief."})
        );
        assert_eq!(
            c["messages"][1]["content"][0],
            json!({"type": "text", "text": "go"})
        );
        assert_eq!(c["messages"][2]["tool_calls"][0]["id"], "call_1");
        assert_eq!(
            c["messages"][3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "done"})
        );
        assert_eq!(c["max_tokens"], 50);
        assert_eq!(c["tools"][0]["function"]["name"], "f");
        assert_eq!(c["tool_choice"]["function"]["name"], "f");
    }

    #[test]
    fn state_and_built_in_tools_are_refused_with_a_400_that_says_why() {
        for (body, param) in [
            (
                json!({"model": "m", "input": "x", "previous_response_id": "resp_1"}),
                "previous_response_id",
            ),
            (json!({"model": "m", "input": "x", "store": true}), "store"),
            (
                json!({"model": "m", "input": "x", "tools": [{"type": "web_search"}]}),
                "tools",
            ),
        ] {
            let e = chat(body).unwrap_err();
            assert_eq!((e.status(), e.param()), (400, Some(param)));
        }
        assert!(chat(json!({"model": "m", "input": "x", "store": false})).is_ok());
    }
}
