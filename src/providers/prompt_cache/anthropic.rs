//! Marks injected into an Anthropic Messages body (Anthropic, Vertex with `publisher:
//! anthropic`), on either surface: a translated chat request or a caller's own Messages body. A
//! mark is `cache_control` on the block that closes its prefix; a string system prompt or user
//! content that gets one becomes one text block of the same text. Nothing else changes.

use super::layout::{elements, with_element, Marking};
use super::{Minimum, Place};
use crate::config::CacheTtl;
use serde_json::{json, Value};

/// `cache_control` at `ttl`: the 5-minute tier is the API's default and carries no `ttl`.
pub fn mark(ttl: CacheTtl) -> Value {
    match ttl {
        CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
        CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

/// The body with its marks, or `None` when no place reaches `min` tokens (or the body is not a
/// Messages object): the body is then sent as built.
pub fn inject(body: &[u8], ttl: CacheTtl, min: u64) -> Option<Vec<u8>> {
    let mut body = Marking::read(body)?;
    let tools = body.raw("tools").and_then(elements).unwrap_or_default();
    let last_tool = tools.len().saturating_sub(1);
    let places = body.places(tools, min, Minimum::Prefix)?;
    let mark = mark(ttl);
    for place in places {
        match place {
            Place::LastTool => {
                let tools = with_element(body.raw("tools")?, last_tool, |t| set_mark(t, &mark))?;
                body.replace("tools", tools);
            }
            Place::System => {
                let system = marked_system(body.raw("system")?, &mark)?;
                body.replace("system", system);
            }
            Place::Message(i) => body.edit_message(i, |m| mark_content(m, &mark))?,
        }
    }
    Some(body.write())
}

fn set_mark(block: &mut Value, mark: &Value) {
    if let Some(o) = block.as_object_mut() {
        o.insert("cache_control".into(), mark.clone());
    }
}

fn text_block(text: &str, mark: &Value) -> Value {
    json!({"type": "text", "text": text, "cache_control": mark})
}

/// A string system prompt becomes one marked text block; a list has its last block marked.
fn marked_system(raw: &str, mark: &Value) -> Option<String> {
    match serde_json::from_str::<Value>(raw).ok()? {
        Value::String(s) => Some(json!([text_block(&s, mark)]).to_string()),
        Value::Array(list) if !list.is_empty() => {
            with_element(raw, list.len() - 1, |b| set_mark(b, mark))
        }
        _ => None,
    }
}

/// A turn's string content becomes one marked text block; a list has its last block marked.
fn mark_content(turn: &mut Value, mark: &Value) {
    match turn.get_mut("content") {
        Some(Value::String(s)) => {
            let block = text_block(s, mark);
            turn["content"] = json!([block]);
        }
        Some(Value::Array(blocks)) => {
            if let Some(last) = blocks.last_mut() {
                set_mark(last, mark);
            }
        }
        _ => {}
    }
}
