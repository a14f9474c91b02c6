//! A translated conversation's turns, written into the upstream body as each caller message is
//! translated, so no tree of the whole conversation is ever held. Anthropic, Converse and Gemini
//! all want roles to alternate: consecutive blocks of one role share one turn.

use serde_json::value::RawValue;
use serde_json::Value;

/// Each caller message of a `messages` array, parsed only while it is translated (the array was
/// checked at parse to hold objects; one that does not parse is passed over).
pub fn each_message(messages: Option<&str>, mut f: impl FnMut(Value)) {
    let list: Vec<&RawValue> = messages
        .and_then(|raw| serde_json::from_str(raw).ok())
        .unwrap_or_default();
    for raw in list {
        if let Ok(m) = serde_json::from_str::<Value>(raw.get()) {
            f(m);
        }
    }
}

/// A message's text: a string as it is, an array's text parts joined by newlines.
pub fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// An assistant message's tool calls.
pub fn tool_calls(message: &Value) -> impl Iterator<Item = &Value> {
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// An assistant tool call's arguments as an object: arguments that are not a JSON object cannot
/// be replayed as a family's tool input, and an empty one keeps the turn well-formed.
pub fn call_arguments(function: Option<&Value>) -> Value {
    let args = function
        .and_then(|f| f.get("arguments"))
        .and_then(Value::as_str)
        .unwrap_or("{}");
    serde_json::from_str::<Value>(args)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::Object(Default::default()))
}

/// The function definitions of a request's `tools` (other tool types have no translation).
pub fn functions(tools: Option<&Value>) -> impl Iterator<Item = &Value> {
    let list = tools.and_then(Value::as_array).into_iter().flatten();
    list.filter_map(|t| t.get("function"))
}

/// A JSON array of `{"role": …, "<key>": [blocks]}` turns written as blocks arrive.
pub struct Turns<'o> {
    out: &'o mut Vec<u8>,
    /// The blocks' key: `content`, or Gemini's `parts`.
    key: &'static str,
    open: Option<&'static str>,
    empty: bool,
}

impl<'o> Turns<'o> {
    pub fn start(out: &'o mut Vec<u8>, key: &'static str) -> Self {
        out.push(b'[');
        Self {
            out,
            key,
            open: None,
            empty: true,
        }
    }

    /// The role of the open turn, if any.
    pub fn open(&self) -> Option<&'static str> {
        self.open
    }

    /// Makes a turn of `role` the open one: `true` when a new turn began (the last one was of
    /// another role, or none was open).
    pub fn turn(&mut self, role: &'static str) -> bool {
        if self.open == Some(role) {
            return false;
        }
        if self.open.is_some() {
            self.out.extend_from_slice(b"]},");
        }
        let head = format!(r#"{{"role":"{role}","{}":["#, self.key);
        self.out.extend_from_slice(head.as_bytes());
        self.open = Some(role);
        self.empty = true;
        true
    }

    /// One block of the open turn.
    pub fn block(&mut self, block: &Value) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        // Writing a Value into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *self.out, block);
    }

    /// Closes the open turn and the array.
    pub fn finish(self) {
        if self.open.is_some() {
            self.out.extend_from_slice(b"]}");
        }
        self.out.push(b']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn consecutive_blocks_of_one_role_share_one_turn_and_roles_alternate() {
        let mut out = Vec::new();
        let mut turns = Turns::start(&mut out, "parts");
        assert!(turns.turn("user"));
        turns.block(&json!({"text": "a"}));
        assert!(!turns.turn("user"));
        turns.block(&json!({"text": "b"}));
        assert!(turns.turn("model"));
        turns.block(&json!({"text": "c"}));
        turns.finish();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v,
            json!([{"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
                {"role": "model", "parts": [{"text": "c"}]}])
        );
        let mut empty = Vec::new();
        Turns::start(&mut empty, "content").finish();
        assert_eq!(empty, b"[]");
    }

    #[test]
    fn each_message_passes_over_what_does_not_parse_and_text_joins_parts() {
        let mut roles = Vec::new();
        each_message(Some(r#"[{"role":"user"},{"role":"tool"}]"#), |m| {
            roles.push(m["role"].as_str().unwrap_or("").to_owned())
        });
        assert_eq!(roles, ["user", "tool"]);
        each_message(Some("not json"), |_| panic!("nothing to translate"));
        let parts = json!([{"type": "text", "text": "a"}, {"type": "image_url"}, {"text": "b"}]);
        assert_eq!(text_of(Some(&parts)), "a\nb");
        assert_eq!(text_of(None), "");
    }
}
