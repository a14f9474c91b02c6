//! Work on a chat body without building a tree of it. On wasm32 every small JSON object parsed
//! into `serde_json::Value` costs hundreds of bytes, so an 8 MiB body of `{"a":0},` would need
//! several hundred MiB; these functions count, check and rewrite the raw text instead, holding at
//! most one message at a time.

use crate::config::SortedMap;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// What one pass over the raw bytes tells before anything is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// An upper bound on the number of JSON values (every value after the first in a container
    /// follows a comma; every container opens with a bracket).
    pub values: usize,
    /// The deepest nesting of arrays and objects.
    pub depth: usize,
}

/// Serde_json refuses deeper nesting than this when it builds a tree; the same bound applies
/// before the raw fields are parsed, so a body is refused the same way whichever path reads it.
pub const MAX_DEPTH: usize = 128;

/// Counts values and nesting in one pass with no allocation, outside strings only, so text
/// content costs nothing.
pub fn extent(bytes: &[u8]) -> Extent {
    let (mut values, mut depth, mut deepest) = (1usize, 0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' => values += 1,
            b'[' | b'{' => {
                values += 1;
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Extent {
        values,
        depth: deepest,
    }
}

/// What checking `messages` learned, besides that it is well-formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MessagesShape {
    /// Some message carries a reasoning field that OpenAI-compatible targets refuse back.
    pub has_reasoning: bool,
}

/// Checks that `messages` is an array of objects each with a string `role`, one message at a
/// time and without keeping any of them.
pub fn check_messages(raw: &str, reasoning_fields: &[&str]) -> Option<MessagesShape> {
    let mut de = serde_json::Deserializer::from_str(raw);
    de.deserialize_seq(MessagesCheck { reasoning_fields }).ok()
}

struct MessagesCheck<'f> {
    reasoning_fields: &'f [&'f str],
}

impl<'de> Visitor<'de> for MessagesCheck<'_> {
    type Value = MessagesShape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MessagesShape, A::Error> {
        let mut shape = MessagesShape::default();
        while let Some(has_reasoning) = seq.next_element_seed(MessageCheck {
            reasoning_fields: self.reasoning_fields,
        })? {
            shape.has_reasoning |= has_reasoning;
        }
        Ok(shape)
    }
}

struct MessageCheck<'f> {
    reasoning_fields: &'f [&'f str],
}

impl<'de> de::DeserializeSeed<'de> for MessageCheck<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MessageCheck<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message object with a string 'role'")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let (mut role, mut has_reasoning) = (false, false);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "role" {
                map.next_value::<Cow<'de, str>>()?;
                role = true;
            } else {
                has_reasoning |= self.reasoning_fields.contains(&key.as_ref());
                map.next_value::<IgnoredAny>()?;
            }
        }
        if role {
            Ok(has_reasoning)
        } else {
            Err(de::Error::missing_field("role"))
        }
    }
}

/// Writes `messages` to `out` with the fields named in `drop` removed from every message,
/// parsing one message at a time (each as a map of raw values borrowed from the input).
pub fn write_messages_without(
    raw: &str,
    drop: &[&str],
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(raw);
    de.deserialize_seq(MessagesWriter { drop, out })
}

struct MessagesWriter<'a> {
    drop: &'a [&'a str],
    out: &'a mut Vec<u8>,
}

impl<'de> Visitor<'de> for MessagesWriter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.out.push(b'[');
        let mut first = true;
        while let Some(message) = seq.next_element::<SortedMap<Cow<'de, str>, &'de RawValue>>()? {
            if !first {
                self.out.push(b',');
            }
            first = false;
            let mut object = ObjectWriter::new(self.out);
            for (k, v) in message
                .iter()
                .filter(|(k, _)| !self.drop.contains(&k.as_ref()))
            {
                object.raw_field(k, v.get());
            }
            object.close();
        }
        self.out.push(b']');
        Ok(())
    }
}

/// Writes one JSON object field by field: keys are escaped, values are already JSON.
pub struct ObjectWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> ObjectWriter<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Self { out, first: true }
    }

    /// The field's value as raw JSON text.
    pub fn raw_field(&mut self, key: &str, json: &str) {
        self.key(key);
        self.out.extend_from_slice(json.as_bytes());
    }

    /// A field whose value is a string, escaped here.
    pub fn string_field(&mut self, key: &str, value: &str) {
        self.key(key);
        write_string(self.out, value);
    }

    /// The key and its colon, for a value the caller writes itself.
    pub fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_string(self.out, key);
        self.out.push(b':');
        self.out
    }

    pub fn close(self) {
        self.out.push(b'}');
    }
}

fn write_string(out: &mut Vec<u8>, s: &str) {
    // Writing a &str as JSON into a Vec cannot fail; an empty string keeps the output valid if
    // it ever did.
    if serde_json::to_writer(&mut *out, s).is_err() {
        out.extend_from_slice(b"\"\"");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(bytes: &[u8]) -> usize {
        extent(bytes).values
    }

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert_eq!(values(br#"{"a":0}"#), 2);
        assert_eq!(values(br#"[{"a":0},{"a":0},{"a":0}]"#), 7);
        assert_eq!(values(br#"{"text":"a,b,[c],{d}"}"#), 2);
        assert_eq!(values(br#"{"text":"quote \" and , comma"}"#), 2);
        assert_eq!(values(br#"{"text":"backslash \\","n":[1,2]}"#), 5);
    }

    #[test]
    fn nesting_depth_is_the_deepest_open_bracket_outside_strings() {
        assert_eq!(extent(br#"{"a":[[1],[2]]}"#).depth, 3);
        assert_eq!(extent(br#"{"a":"[[[[["}"#).depth, 1);
        assert_eq!(extent(b"[]").depth, 1);
    }

    #[test]
    fn messages_must_be_objects_with_a_string_role() {
        let fields = &["reasoning_content"];
        assert_eq!(
            check_messages(r#"[{"role":"user","content":"hi"}]"#, fields),
            Some(MessagesShape {
                has_reasoning: false
            })
        );
        for bad in [
            r#""hi""#,
            r#"[{"content":"no role"}]"#,
            r#"[{"role":5}]"#,
            r#"["text"]"#,
            r#"[null]"#,
        ] {
            assert_eq!(check_messages(bad, fields), None, "{bad}");
        }
        assert_eq!(
            check_messages(r#"[{"role":"assistant","reasoning_content":"x"}]"#, fields),
            Some(MessagesShape {
                has_reasoning: true
            })
        );
    }

    #[test]
    fn dropped_fields_leave_every_other_byte_of_each_message_as_sent() {
        let mut out = Vec::new();
        write_messages_without(
            r#"[{"role":"user","content":[{"type":"text","text":"a\"b"}]},{"role":"assistant","content":"x","thinking_blocks":[1]}]"#,
            &["thinking_blocks"],
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"[{"content":[{"type":"text","text":"a\"b"}],"role":"user"},{"content":"x","role":"assistant"}]"#
        );
    }

    #[test]
    fn keys_are_escaped_and_values_are_written_raw() {
        let mut out = Vec::new();
        let mut o = ObjectWriter::new(&mut out);
        o.raw_field("n", "[1, 2]");
        o.string_field("q\"", "v\n");
        o.close();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"n":[1, 2],"q\"":"v\n"}"#
        );
    }
}
