//! An event's fields, written as the gateway's log lines and alert bodies always were: one flat
//! JSON object whose keys are in byte order. That is the order `serde_json::json!` gives, since
//! this crate leaves serde_json's `preserve_order` feature off (its maps are sorted). A value is
//! written as its own `Serialize` writes it; a nested structure (`V::Tree`) goes through a JSON
//! tree, so its keys are sorted too. Building the fields allocates nothing.

use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

/// The most fields one event has (an `alert.*` body has ten).
const MAX_FIELDS: usize = 12;

/// One field's value.
#[derive(Clone, Copy)]
pub enum V<'a> {
    Str(&'a str),
    /// `null` when absent.
    OptStr(Option<&'a str>),
    U64(u64),
    /// `null` when absent.
    OptU64(Option<u64>),
    /// A non-finite number is `null`, as in a JSON tree.
    F64(f64),
    Bool(bool),
    Strs(&'a [String]),
    /// Its `Display` text, as a string (what `e.to_string()` gave).
    Shown(&'a dyn fmt::Display),
    /// Its `Debug` text, as a string (what `format!("{e:?}")` gave).
    Dbg(&'a dyn fmt::Debug),
    /// A structure, through a JSON tree (keys sorted at every depth).
    Tree(&'a dyn Tree),
    /// Two texts joined, as one string (`"{what} write failed"`).
    Joined(&'a str, &'static str),
}

/// A value written through a JSON tree.
pub trait Tree {
    fn tree(&self) -> serde_json::Value;
}

impl<T: Serialize> Tree for T {
    fn tree(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

impl Serialize for V<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Self::Str(v) => s.serialize_str(v),
            Self::OptStr(v) => v.serialize(s),
            Self::U64(v) => s.serialize_u64(v),
            Self::OptU64(v) => v.serialize(s),
            Self::F64(v) => s.serialize_f64(v),
            Self::Bool(v) => s.serialize_bool(v),
            Self::Strs(v) => v.serialize(s),
            Self::Shown(v) => s.collect_str(v),
            Self::Dbg(v) => s.collect_str(&format_args!("{v:?}")),
            Self::Tree(v) => v.tree().serialize(s),
            Self::Joined(a, b) => s.collect_str(&format_args!("{a}{b}")),
        }
    }
}

/// The fields of one event, in any order; written sorted by key.
#[derive(Clone, Copy)]
pub struct Fields<'a> {
    len: usize,
    slots: [(&'static str, V<'a>); MAX_FIELDS],
}

impl<'a> Fields<'a> {
    pub fn new() -> Self {
        Self {
            len: 0,
            slots: [("", V::U64(0)); MAX_FIELDS],
        }
    }

    pub fn with(mut self, key: &'static str, value: V<'a>) -> Self {
        if let Some(slot) = self.slots.get_mut(self.len) {
            *slot = (key, value);
            self.len += 1;
        }
        self
    }

    /// The field only when there is a value (a key left out, not `null`).
    pub fn with_some(self, key: &'static str, value: Option<V<'a>>) -> Self {
        match value {
            Some(v) => self.with(key, v),
            None => self,
        }
    }

    fn sorted(&self) -> ([(&'static str, V<'a>); MAX_FIELDS], usize) {
        let mut slots = self.slots;
        let len = self.len.min(MAX_FIELDS);
        if let Some(used) = slots.get_mut(..len) {
            used.sort_unstable_by_key(|(k, _)| *k);
        }
        (slots, len)
    }
}

impl Default for Fields<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (slots, len) = self.sorted();
        let mut map = s.serialize_map(Some(len))?;
        for (key, value) in slots.iter().take(len) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
