//! A built upstream body read without a tree: its top-level fields in order as raw JSON text, and
//! a list field's elements likewise. Only the few elements a mark lands on are parsed, so an
//! injected body costs one more copy of the body, never a tree of the conversation.

use super::{Place, Spot};
use crate::api::raw_json::ObjectWriter;
use crate::usage::estimate::{prompt_bytes, tokens_for_bytes};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

/// An object's fields in order, each value as its raw JSON text.
pub fn fields(body: &[u8]) -> Option<Vec<(String, &RawValue)>> {
    struct Fields;
    impl<'de> Visitor<'de> for Fields {
        type Value = Vec<(String, &'de RawValue)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    de.deserialize_map(Fields).ok()
}

/// An array's elements as raw JSON text (`None` when it is not an array).
pub fn elements(raw: &str) -> Option<Vec<&RawValue>> {
    serde_json::from_str(raw).ok()
}

/// What a mark spot needs to know of a conversation, in prompt order.
pub struct Layout<'a> {
    pub tools: Vec<&'a RawValue>,
    /// The system prompt as raw JSON text, when there is one.
    pub system: Option<&'a str>,
    pub messages: Vec<&'a RawValue>,
}

#[derive(serde::Deserialize)]
struct Turn<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// Non-empty text or a non-empty list: something a mark can close.
fn markable(raw: &str) -> bool {
    let raw = raw.trim();
    match raw.as_bytes().first() {
        Some(b'"') => raw != "\"\"",
        Some(b'[') => raw[1..].trim_start() != "]",
        _ => false,
    }
}

impl Layout<'_> {
    /// Every place a mark could go, in prompt order, with its prefix's estimate: the last tool,
    /// the system prompt, and the last two user turns that have content.
    pub fn spots(&self) -> Vec<Spot> {
        let mut spots = Vec::new();
        let mut bytes: usize = self.tools.iter().map(|t| prompt_bytes(t.get())).sum();
        let at = |place, bytes| Spot {
            place,
            prefix_tokens: tokens_for_bytes(bytes),
        };
        if !self.tools.is_empty() {
            spots.push(at(Place::LastTool, bytes));
        }
        if let Some(system) = self.system.filter(|s| markable(s)) {
            bytes += prompt_bytes(system);
            spots.push(at(Place::System, bytes));
        }
        let mut users = Vec::new();
        for (i, m) in self.messages.iter().enumerate() {
            bytes += prompt_bytes(m.get());
            let Ok(turn) = serde_json::from_str::<Turn<'_>>(m.get()) else {
                continue;
            };
            if turn.role.as_deref() == Some("user")
                && turn.content.is_some_and(|c| markable(c.get()))
            {
                users.push(at(Place::Message(i), bytes));
            }
        }
        let newest_two = users.len().saturating_sub(2);
        spots.extend(users.drain(newest_two..));
        spots
    }
}

/// `raw` with the element at `index` replaced by what `edit` makes of it.
pub fn with_element(raw: &str, index: usize, edit: impl FnOnce(&mut Value)) -> Option<String> {
    let list = elements(raw)?;
    let mut edit = Some(edit);
    let mut out = String::with_capacity(raw.len() + 64);
    out.push('[');
    for (i, e) in list.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if let Some(edit) = edit.take_if(|_| i == index) {
            let mut v: Value = serde_json::from_str(e.get()).ok()?;
            edit(&mut v);
            out.push_str(&v.to_string());
        } else {
            out.push_str(e.get());
        }
    }
    out.push(']');
    Some(out)
}

/// The body's fields in order, each replaced where `replaced` has a new text for it.
pub fn write(fields: &[(String, &RawValue)], replaced: &[(&str, String)]) -> Vec<u8> {
    let size = fields
        .iter()
        .map(|(k, v)| k.len() + v.get().len() + 4)
        .sum::<usize>()
        + 256;
    let mut out = Vec::with_capacity(size);
    let mut object = ObjectWriter::new(&mut out);
    for (k, v) in fields {
        match replaced.iter().find(|(name, _)| name == k) {
            Some((_, text)) => object.raw_field(k, text),
            None => object.raw_field(k, v.get()),
        }
    }
    object.close();
    out
}
