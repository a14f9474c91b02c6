//! Messages request → chat-completions request, for OpenAI-compatible candidates: the tables of
//! `providers::anthropic::request` read in reverse. Messages are translated one at a time from the
//! raw body; only small fields become trees.

use crate::api::{ApiError, ChatRequest, ErrorKind};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

pub(super) fn invalid(field: &str, what: &str) -> ApiError {
    ApiError::new(ErrorKind::InvalidType, format!("'{field}' must be {what}.")).with_param(field)
}

pub fn to_chat(raw: &ChatRequest) -> Result<Vec<u8>, ApiError> {
    match raw.value("max_tokens") {
        Some(Value::Number(n)) if n.is_u64() => {}
        _ => {
            return Err(
                ApiError::new(ErrorKind::MissingMaxTokens, "'max_tokens' is required.")
                    .with_param("max_tokens"),
            )
        }
    }
    let mut out = Map::new();
    out.insert("model".into(), raw.model.clone().into());
    let mut messages: Vec<Value> = Vec::new();
    match raw.value("system") {
        None => {}
        Some(Value::String(s)) => messages.push(json!({"role": "system", "content": s})),
        Some(Value::Array(blocks)) => {
            messages.push(json!({"role": "system", "content": text_of(&blocks)}))
        }
        Some(_) => return Err(invalid("system", "a string or an array of text blocks")),
    }
    let list: Vec<&RawValue> = raw
        .raw("messages")
        .map(serde_json::from_str)
        .transpose()
        .map_err(|_| invalid("messages", "an array of messages"))?
        .unwrap_or_default();
    for item in list {
        let m: Value = serde_json::from_str(item.get())
            .map_err(|_| invalid("messages", "an array of messages"))?;
        translate_message(&m, &mut messages);
    }
    out.insert("messages".into(), messages.into());
    for (from, to) in [
        ("max_tokens", "max_tokens"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("stop_sequences", "stop"),
        ("stream", "stream"),
        // Kept for the OpenAI body writer, which maps a thinking budget to `reasoning_effort`
        // for models that reason and drops it otherwise.
        ("thinking", "thinking"),
    ] {
        if let Some(v) = raw.value(from) {
            out.insert(to.into(), v);
        }
    }
    if raw.stream {
        // Usage is part of Messages' `message_delta`.
        out.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(user) = raw
        .value("metadata")
        .and_then(|m| m.get("user_id").cloned())
    {
        out.insert("user".into(), user);
    }
    if let Some(Value::Array(tools)) = raw.value("tools") {
        let tools: Vec<Value> = tools.iter().filter_map(tool).collect();
        if !tools.is_empty() {
            out.insert("tools".into(), tools.into());
        }
    }
    if let Some(choice) = raw.value("tool_choice") {
        let (choice, parallel) = tool_choice(&choice);
        if let Some(c) = choice {
            out.insert("tool_choice".into(), c);
        }
        if parallel == Some(false) {
            out.insert("parallel_tool_calls".into(), false.into());
        }
    }
    serde_json::to_vec(&Value::Object(out)).map_err(|_| ApiError::internal())
}

/// Custom tools only: server tools (web search and the like) have no chat-completions form.
fn tool(t: &Value) -> Option<Value> {
    let name = t.get("name")?;
    if t.get("type")
        .and_then(Value::as_str)
        .is_some_and(|k| k != "custom")
    {
        return None;
    }
    let mut function = json!({
        "name": name,
        "parameters": t.get("input_schema").cloned().unwrap_or_else(|| json!({"type": "object"})),
    });
    if let Some(d) = t.get("description") {
        function["description"] = d.clone();
    }
    Some(json!({"type": "function", "function": function}))
}

fn tool_choice(c: &Value) -> (Option<Value>, Option<bool>) {
    let parallel = c
        .get("disable_parallel_tool_use")
        .and_then(Value::as_bool)
        .map(|d| !d);
    let choice = match c.get("type").and_then(Value::as_str) {
        Some("auto") => Some(json!("auto")),
        Some("any") => Some(json!("required")),
        Some("none") => Some(json!("none")),
        Some("tool") => c
            .get("name")
            .map(|n| json!({"type": "function", "function": {"name": n}})),
        _ => None,
    };
    (choice, parallel)
}

fn text_of(blocks: &[Value]) -> String {
    blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One Messages turn → chat messages. Tool results become `tool` messages (before the rest of
/// the user turn, as chat completions wants them right after the assistant's calls); thinking
/// blocks ride along as `thinking_blocks`, which the OpenAI body writer strips.
fn translate_message(m: &Value, out: &mut Vec<Value>) {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
    let blocks = match m.get("content") {
        Some(Value::String(s)) => {
            out.push(json!({"role": role, "content": s}));
            return;
        }
        Some(Value::Array(blocks)) => blocks.as_slice(),
        _ => return,
    };
    let mut parts: Vec<Value> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut thinking: Vec<Value> = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(json!({"type": "text", "text": b.get("text").cloned().unwrap_or_default()})),
            Some("image") => {
                if let Some(url) = image_url(b.get("source")) {
                    parts.push(json!({"type": "image_url", "image_url": {"url": url}}));
                }
            }
            Some("tool_use") => calls.push(json!({
                "id": b.get("id").cloned().unwrap_or_default(),
                "type": "function",
                "function": {
                    "name": b.get("name").cloned().unwrap_or_default(),
                    "arguments": b.get("input").map(Value::to_string).unwrap_or_else(|| "{}".into()),
                },
            })),
            Some("tool_result") => out.push(json!({
                "role": "tool",
                "tool_call_id": b.get("tool_use_id").cloned().unwrap_or_default(),
                "content": match b.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(a)) => text_of(a),
                    _ => String::new(),
                },
            })),
            Some("thinking" | "redacted_thinking") => thinking.push(b.clone()),
            _ => {}
        }
    }
    if role == "assistant" {
        let text = text_of(&parts);
        let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { text.into() }});
        if !calls.is_empty() {
            msg["tool_calls"] = calls.into();
        }
        if !thinking.is_empty() {
            msg["thinking_blocks"] = thinking.into();
        }
        if !msg["content"].is_null() || msg.get("tool_calls").is_some() {
            out.push(msg);
        }
    } else if !parts.is_empty() {
        out.push(json!({"role": role, "content": parts}));
    }
}

/// A base64 source becomes a data URL; a URL source stays a URL.
fn image_url(source: Option<&Value>) -> Option<String> {
    let s = source?;
    match s.get("type").and_then(Value::as_str)? {
        "base64" => Some(format!(
            "data:{};base64,{}",
            s.get("media_type")?.as_str()?,
            s.get("data")?.as_str()?
        )),
        "url" => Some(s.get("url")?.as_str()?.to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(v: Value) -> Value {
        let raw = ChatRequest::parse(v.to_string().as_bytes()).unwrap();
        serde_json::from_slice(&to_chat(&raw).unwrap()).unwrap()
    }

    #[test]
    fn system_blocks_tools_and_sampling_map_to_their_chat_completions_fields() {
        let c = chat(json!({
            "model": "m", "max_tokens": 100, "temperature": 0.5, "top_p": 0.9, "top_k": 5,
            "stop_sequences": ["END"], "metadata": {"user_id": "u1"},
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "get_weather", "description": "d", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA"}}]}]
        }));
        assert_eq!(
            c["messages"][0],
            json!({"role": "system", "content": "Be brief."})
        );
        assert_eq!(
            c["messages"][1]["content"][1]["image_url"]["url"],
            "data:image/png;base64,AAA"
        );
        assert_eq!(
            (
                c["max_tokens"].clone(),
                c["stop"].clone(),
                c["user"].clone()
            ),
            (json!(100), json!(["END"]), json!("u1"))
        );
        assert_eq!(c["tools"][0]["function"]["name"], "get_weather");
        assert_eq!(
            (c["tool_choice"].clone(), c["parallel_tool_calls"].clone()),
            (json!("required"), json!(false))
        );
        assert!(c.get("top_k").is_none(), "no chat-completions equivalent");
    }

    #[test]
    fn a_tool_use_round_trip_becomes_tool_calls_and_a_tool_message() {
        let c = chat(json!({"model": "m", "max_tokens": 10, "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "tool_use", "id": "tu_1", "name": "get_weather", "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "rain"}]}]}));
        let call = &c["messages"][1]["tool_calls"][0];
        assert_eq!(call["id"], "tu_1");
        assert_eq!(call["function"]["arguments"], r#"{"city":"Oslo"}"#);
        assert_eq!(c["messages"][1]["thinking_blocks"][0]["signature"], "sig");
        assert_eq!(
            c["messages"][2],
            json!({"role": "tool", "tool_call_id": "tu_1", "content": "rain"})
        );
    }

    #[test]
    fn max_tokens_is_required_as_on_the_messages_api() {
        let raw = ChatRequest::parse(br#"{"model":"m","messages":[]}"#).unwrap();
        let e = to_chat(&raw).unwrap_err();
        assert_eq!((e.status(), e.param()), (400, Some("max_tokens")));
    }
}
