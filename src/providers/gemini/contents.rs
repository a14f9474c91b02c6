//! Chat `messages` → Gemini `contents`, written one caller message at a time so no tree of the
//! whole conversation is ever held.
//!
//! System and developer messages become the system instruction; assistant turns are `model`
//! turns; tool results are `functionResponse` parts in a `user` turn; consecutive turns of one
//! role merge, so parallel results share one turn and roles alternate.

use super::tool_id;
use crate::providers::turns::{call_arguments, each_message, text_of, Turns};
use serde_json::{json, Map, Value};

/// What Gemini takes in place of a thought signature for a function call it did not sign (one
/// replayed from another family's answer): Gemini 3 refuses an unsigned call in the current
/// turn, and this documented value tells it to skip the check.
pub const UNSIGNED: &str = "skip_thought_signature_validator";

/// Writes the `contents` array to `out` and returns the system text (empty: none).
pub(super) fn write(messages: Option<&str>, out: &mut Vec<u8>) -> String {
    let mut system: Vec<String> = Vec::new();
    // The calls of the last assistant turn (id, name): a tool result takes its name from there.
    let mut calls: Vec<(String, Value)> = Vec::new();
    let mut turns = Turns::start(out, "parts");
    // Whether the open turn has a function call yet: its first one must carry a signature.
    let mut turn_has_call = false;
    each_message(messages, |m| {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let (role, parts) = match role {
            "system" | "developer" => {
                system.push(text_of(m.get("content")));
                return;
            }
            "assistant" => ("model", assistant_parts(&m, &mut calls)),
            "tool" => ("user", vec![function_response(&m, &calls)]),
            _ => ("user", content_parts(m.get("content"))),
        };
        if parts.is_empty() {
            return;
        }
        if turns.turn(role) {
            turn_has_call = false;
        }
        for mut part in parts {
            if let Some(p) = part
                .as_object_mut()
                .filter(|p| p.contains_key("functionCall"))
            {
                if !turn_has_call && !p.contains_key("thoughtSignature") {
                    p.insert("thoughtSignature".into(), UNSIGNED.into());
                }
                turn_has_call = true;
            }
            turns.block(&part);
        }
    });
    turns.finish();
    system.retain(|s| !s.is_empty());
    system.join("\n\n")
}

/// Text, image, audio and file parts; other part types have no Gemini equivalent here and are
/// dropped, as are empty texts (Gemini refuses a part with no data).
fn content_parts(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(s)) if !s.is_empty() => vec![json!({"text": s})],
        Some(Value::Array(parts)) => parts.iter().filter_map(part).collect(),
        _ => Vec::new(),
    }
}

fn part(p: &Value) -> Option<Value> {
    match p.get("type")?.as_str()? {
        "text" => {
            let text = p.get("text")?.as_str().filter(|t| !t.is_empty())?;
            Some(json!({"text": text}))
        }
        "image_url" => Some(media(p.get("image_url")?.get("url")?.as_str()?)),
        "input_audio" => {
            let audio = p.get("input_audio")?;
            let format = audio.get("format")?.as_str()?;
            Some(inline(
                &format!("audio/{format}"),
                audio.get("data")?.as_str()?,
            ))
        }
        "file" => {
            let data = p.get("file")?.get("file_data")?.as_str()?;
            data.starts_with("data:").then(|| media(data))
        }
        _ => None,
    }
}

fn inline(mime: &str, data: &str) -> Value {
    json!({"inlineData": {"mimeType": mime, "data": data}})
}

/// A `data:<mime>;base64,<data>` URL becomes inline data; any other URL a `fileData` reference
/// Gemini fetches itself, typed by its extension (Vertex requires a type; JPEG when unknown).
fn media(url: &str) -> Value {
    if let Some((meta, data)) = url.strip_prefix("data:").and_then(|r| r.split_once(',')) {
        if let Some(mime) = meta.strip_suffix(";base64") {
            return inline(mime, data);
        }
    }
    json!({"fileData": {"mimeType": mime_of(url), "fileUri": url}})
}

fn mime_of(url: &str) -> &'static str {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "png" => "image/png",
        "webp" => "image/webp",
        "gif" => "image/gif",
        "heic" => "image/heic",
        "heif" => "image/heif",
        "pdf" => "application/pdf",
        _ => "image/jpeg",
    }
}

/// A model turn: text, then one `functionCall` part per tool call, each with the signature its
/// id carries. The turn's calls replace `calls`. Reasoning fields from earlier answers are
/// dropped: Gemini takes back no unsigned thought text.
fn assistant_parts(m: &Value, calls: &mut Vec<(String, Value)>) -> Vec<Value> {
    let mut parts = content_parts(m.get("content"));
    let tool_calls = m.get("tool_calls").and_then(Value::as_array);
    if tool_calls.is_some_and(|c| !c.is_empty()) {
        calls.clear();
    }
    for call in tool_calls.into_iter().flatten() {
        let f = call.get("function");
        let name = f.and_then(|f| f.get("name")).cloned().unwrap_or_default();
        let args = call_arguments(f);
        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
        let mut part = Map::new();
        part.insert(
            "functionCall".into(),
            json!({"name": name.clone(), "args": args}),
        );
        if let Some(sig) = tool_id::signature(id) {
            part.insert("thoughtSignature".into(), sig.into());
        }
        parts.push(Value::Object(part));
        calls.push((id.to_owned(), name));
    }
    parts
}

/// A tool result as a `functionResponse` named after the call it answers (or the message's own
/// `name`). Gemini wants `response` to be an object: an output that parses as one is used as
/// is; any other output is wrapped as `{"content": <its JSON value, or the text>}`.
fn function_response(m: &Value, calls: &[(String, Value)]) -> Value {
    let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
    let name = calls
        .iter()
        .find(|(call, _)| call == id)
        .map(|(_, name)| name.clone())
        .or_else(|| m.get("name").cloned())
        .unwrap_or_else(|| "tool".into());
    let output = text_of(m.get("content"));
    let response = match serde_json::from_str::<Value>(&output) {
        Ok(v @ Value::Object(_)) => v,
        Ok(v) => json!({"content": v}),
        Err(_) => json!({"content": output}),
    };
    json!({"functionResponse": {"name": name, "response": response}})
}
