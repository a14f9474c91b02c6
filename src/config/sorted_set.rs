//! The crate's ordered set: a `SortedMap` of keys alone (why not `BTreeSet`: `sorted_map`).

use super::sorted_map::SortedMap;
use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::marker::PhantomData;

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SortedSet<T> {
    map: SortedMap<T, ()>,
}

impl<T> Default for SortedSet<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> SortedSet<T> {
    pub const fn new() -> Self {
        Self {
            map: SortedMap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator + Clone {
        self.map.keys()
    }

    pub fn clear(&mut self) {
        self.map.clear();
    }

    pub fn first(&self) -> Option<&T> {
        self.map.first_key_value().map(|(k, _)| k)
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.map.retain(|k, _| keep(k));
    }
}

impl<T: Ord> SortedSet<T> {
    /// `true` when `item` was not in the set yet.
    pub fn insert(&mut self, item: T) -> bool {
        self.map.insert(item, ()).is_none()
    }

    pub fn contains<Q: Ord + ?Sized>(&self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.map.contains_key(item)
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.map.remove(item).is_some()
    }
}

impl<T: Ord + Clone> SortedSet<T> {
    /// The items in exactly one of the two sets, in order.
    pub fn symmetric_difference<'a>(&'a self, other: &'a Self) -> impl Iterator<Item = &'a T> {
        let only = |a: &'a Self, b: &'a Self| a.iter().filter(move |t| !b.contains(*t));
        let mut out: Vec<&T> = only(self, other).chain(only(other, self)).collect();
        super::sort::sort(&mut out);
        out.into_iter()
    }
}

impl<T: Ord, const N: usize> From<[T; N]> for SortedSet<T> {
    fn from(items: [T; N]) -> Self {
        items.into_iter().collect()
    }
}

impl<T: Ord> FromIterator<T> for SortedSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        Self {
            map: items.into_iter().map(|t| (t, ())).collect(),
        }
    }
}

impl<T: Ord> Extend<T> for SortedSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        self.map.extend(items.into_iter().map(|t| (t, ())));
    }
}

impl<T> IntoIterator for SortedSet<T> {
    type Item = T;
    type IntoIter = std::iter::Map<std::vec::IntoIter<(T, ())>, fn((T, ())) -> T>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.into_iter().map(|(t, ())| t)
    }
}

impl<'a, T> IntoIterator for &'a SortedSet<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (T, ())>, fn(&'a (T, ())) -> &'a T>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.as_slice().iter().map(|(t, ())| t)
    }
}

impl<T: fmt::Debug> fmt::Debug for SortedSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<T: Serialize> Serialize for SortedSet<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for item in self.iter() {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

impl<'de, T: Deserialize<'de> + Ord> Deserialize<'de> for SortedSet<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SeqVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Ord> Visitor<'de> for SeqVisitor<T> {
            type Value = SortedSet<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(access.size_hint().unwrap_or(0).min(4096));
                while let Some(item) = access.next_element()? {
                    items.push(item);
                }
                Ok(items.into_iter().collect())
            }
        }
        d.deserialize_seq(SeqVisitor(PhantomData))
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl<T: schemars::JsonSchema> schemars::JsonSchema for SortedSet<T> {
    fn inline_schema() -> bool {
        <std::collections::BTreeSet<T>>::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <std::collections::BTreeSet<T>>::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        <std::collections::BTreeSet<T>>::schema_id()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <std::collections::BTreeSet<T>>::json_schema(g)
    }
}
