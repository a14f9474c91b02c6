//! A built upstream body read without a tree: its top-level fields in order as raw JSON text, and
//! a list field's elements likewise. Only the few elements a mark lands on are parsed, so an
//! injected body costs one more copy of the body, never a tree of the conversation.

use super::{choose, Minimum, Place, Spot};
use crate::api::raw_json::ObjectWriter;
use crate::usage::estimate::{prompt_bytes, tokens_for_bytes};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

/// An object's fields in order, each value as its raw JSON text.
fn fields(body: &[u8]) -> Option<Vec<(String, &RawValue)>> {
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
fn write(fields: &[(String, &RawValue)], replaced: &[(&str, String)]) -> Vec<u8> {
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

/// A body being marked: its fields as read, the fields a mark replaces whole, and the messages
/// list, edited one element at a time (each edit on the list the one before left).
pub struct Marking<'b> {
    fields: Vec<(String, &'b RawValue)>,
    replaced: Vec<(&'static str, String)>,
    messages: Option<String>,
}

impl<'b> Marking<'b> {
    /// `None` when the body is not an object.
    pub fn read(body: &'b [u8]) -> Option<Self> {
        Some(Self {
            fields: fields(body)?,
            replaced: Vec::new(),
            messages: None,
        })
    }

    /// A top-level field's raw JSON text, as read.
    pub fn raw(&self, name: &str) -> Option<&'b str> {
        let found = self.fields.iter().find(|(k, _)| k == name);
        found.map(|(_, v)| v.get())
    }

    /// The places to mark, by `rule` at `min` tokens, with the tools read as the dialect keeps
    /// them; `None` when no place qualifies.
    pub fn places(&self, tools: Vec<&'b RawValue>, min: u64, rule: Minimum) -> Option<Vec<Place>> {
        let layout = Layout {
            tools,
            system: self.raw("system"),
            messages: self.raw("messages").and_then(elements).unwrap_or_default(),
        };
        Some(choose(&layout.spots(), min, rule)).filter(|p| !p.is_empty())
    }

    pub fn replace(&mut self, name: &'static str, text: String) {
        self.replaced.push((name, text));
    }

    /// Edits the message at `index`; `None` when the messages are not a list.
    pub fn edit_message(&mut self, index: usize, edit: impl FnOnce(&mut Value)) -> Option<()> {
        let current = self.messages.as_deref().or(self.raw("messages"))?;
        self.messages = Some(with_element(current, index, edit)?);
        Some(())
    }

    /// The body with every replacement in place.
    pub fn write(mut self) -> Vec<u8> {
        self.replaced
            .extend(self.messages.take().map(|m| ("messages", m)));
        write(&self.fields, &self.replaced)
    }
}
