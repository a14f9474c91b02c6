//! The caller's `messages` → Converse `messages` and `system`, written one caller message at a
//! time. The rules a Converse conversation must keep:
//! - roles are `user` and `assistant` only, and alternate: consecutive turns of one role merge
//!   (tool results become user turns, so results in a row, and a user text right after them,
//!   share one turn);
//! - the first turn is a user turn: a conversation opening with the assistant gets a `"."` user
//!   turn before it (dropping the assistant's words would change what the model is told);
//! - text blocks are never blank: blank text is left out, and a message left with no block is
//!   dropped (a tool result left empty says `"."`, since its call needs an answer);
//! - system and developer messages become `system` text blocks, wherever they stand.

use super::tools::sanitize;
use crate::providers::turns::{call_arguments, each_message, text_of, tool_calls, Turns};
use serde_json::{json, Value};

/// The text that stands in for a turn or tool result with nothing to say.
const PLACEHOLDER: &str = ".";

/// What the conversation carries beside `messages`.
#[derive(Debug, Default)]
pub struct Conversation {
    /// `system` blocks, in order.
    pub system: Vec<Value>,
    /// The (sanitized) names of the tools the history calls, each once: declared in `toolConfig`
    /// when the request sends no tools.
    pub history_tools: Vec<String>,
}

/// Writes the Converse `messages` array to `out`; returns the rest of the conversation.
pub fn write_messages(messages: Option<&str>, out: &mut Vec<u8>) -> Conversation {
    let mut conversation = Conversation::default();
    let mut turns = Turns::start(out, "content");
    each_message(messages, |m| {
        let (role, blocks) = match m.get("role").and_then(Value::as_str).unwrap_or("user") {
            "system" | "developer" => {
                let text = text_of(m.get("content"));
                if !is_blank(&text) {
                    conversation.system.push(json!({ "text": text }));
                }
                return;
            }
            "assistant" => ("assistant", assistant_blocks(&m, &mut conversation)),
            "tool" => ("user", vec![tool_result(&m)]),
            _ => ("user", content_blocks(m.get("content"))),
        };
        if blocks.is_empty() {
            return;
        }
        if turns.open().is_none() && role != "user" {
            turns.turn("user");
            turns.block(&json!({ "text": PLACEHOLDER }));
        }
        turns.turn(role);
        blocks.iter().for_each(|b| turns.block(b));
    });
    turns.finish();
    conversation
}

/// Converse refuses text that is empty or only whitespace.
fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Text and image parts; other part types (audio, files) have no Converse block here and are
/// dropped.
fn content_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(s)) if !is_blank(s) => vec![json!({ "text": s })],
        Some(Value::Array(parts)) => parts.iter().filter_map(part).collect(),
        _ => Vec::new(),
    }
}

fn part(p: &Value) -> Option<Value> {
    match p.get("type")?.as_str()? {
        "text" => {
            let text = p.get("text")?.as_str()?;
            (!is_blank(text)).then(|| json!({ "text": text }))
        }
        "image_url" => image(p.get("image_url")?.get("url")?.as_str()?),
        _ => None,
    }
}

/// A base64 data URL of a format Converse takes → an image block. Converse takes image bytes
/// (or S3 locations), never a web URL, so any other image is dropped rather than fetched.
fn image(url: &str) -> Option<Value> {
    let (meta, data) = url.strip_prefix("data:")?.split_once(',')?;
    let media_type = meta.strip_suffix(";base64")?;
    let format = match media_type.to_ascii_lowercase().as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => return None,
    };
    Some(json!({"image": {"format": format, "source": {"bytes": data}}}))
}

/// An assistant turn: text, then tool calls. Reasoning from earlier turns is dropped (Converse
/// takes back only signed reasoning of its own, and no reasoning is requested).
fn assistant_blocks(m: &Value, conversation: &mut Conversation) -> Vec<Value> {
    let mut blocks = content_blocks(m.get("content"));
    for call in tool_calls(m) {
        let f = call.get("function");
        let name = sanitize(
            f.and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        let input = call_arguments(f);
        if !conversation.history_tools.contains(&name) {
            conversation.history_tools.push(name.clone());
        }
        blocks.push(json!({"toolUse": {
            "toolUseId": call.get("id").and_then(Value::as_str).unwrap_or(""),
            "name": name,
            "input": input,
        }}));
    }
    blocks
}

/// A tool message's content as text, exactly as the tool answered.
fn tool_result(m: &Value) -> Value {
    let text = text_of(m.get("content"));
    let text = if is_blank(&text) {
        PLACEHOLDER
    } else {
        text.as_str()
    };
    json!({"toolResult": {
        "toolUseId": m.get("tool_call_id").and_then(Value::as_str).unwrap_or(""),
        "content": [{ "text": text }],
    }})
}
