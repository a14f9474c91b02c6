//! Admin bodies read by the rules their JSON Schema states, not serde_json's leniencies: a struct
//! is a JSON object only (serde also reads a struct from an array, by position, so
//! `["acme","Acme"]` made a tenant and `"breaker": [null]` passed as settings), and an integer
//! may be written as a number with a zero fraction (`17.0` is an integer to JSON Schema; serde
//! refuses it for a `u32`).
//!
//! The body is parsed to a `serde_json::Value` first (admin bodies are small and bounded), then
//! the types read it through `Strict`, whose error names the value it is about
//! (`breaker.window_ms`): the notation serde_path_to_error used, without its wrapper around every
//! visitor of every admin type (one copy of each type's reading code instead of two layers).

use serde::de::{
    self, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::{Number, Value};
use std::fmt;

/// A parsed JSON value, as a `Deserializer` with the rules above.
pub struct Strict<'a>(pub &'a Value);

impl<'de> de::Deserializer<'de> for Strict<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => visit_number(n, visitor),
            Value::String(s) => visitor.visit_str(s),
            Value::Array(items) => visitor.visit_seq(Items(items.iter().enumerate())),
            Value::Object(map) => visitor.visit_map(Fields {
                entries: map.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(_) => self.deserialize_any(visitor),
            other => Err(de::Error::invalid_type(unexpected(other), &visitor)),
        }
    }

    /// Only unit variants (`"openai"`, `"round_robin"`) occur in admin bodies.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(UnitVariant(s)),
            other => Err(de::Error::invalid_type(unexpected(other), &visitor)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

/// `17.0` and `1e2` are integers to JSON Schema, so they reach an integer field as one.
fn visit_number<'de, V: Visitor<'de>>(n: &Number, visitor: V) -> Result<V::Value, Error> {
    if let Some(u) = n.as_u64() {
        return visitor.visit_u64(u);
    }
    if let Some(i) = n.as_i64() {
        return visitor.visit_i64(i);
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    // The bounds are exact powers of two, so the casts below are exact too.
    if f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&f) {
        return visitor.visit_u64(f as u64);
    }
    if f.fract() == 0.0 && (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
        return visitor.visit_i64(f as i64);
    }
    visitor.visit_f64(f)
}

fn unexpected(v: &Value) -> Unexpected<'_> {
    match v {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (_, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

struct Items<'a>(std::iter::Enumerate<std::slice::Iter<'a, Value>>);

impl<'de> SeqAccess<'de> for Items<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|(i, v)| {
                seed.deserialize(Strict(v))
                    .map_err(|e| e.at(Segment::Index(i)))
            })
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Fields<'a> {
    entries: serde_json::map::Iter<'a>,
    value: Option<(&'a String, &'a Value)>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.entries.next() {
            Some((key, value)) => {
                self.value = Some((key, value));
                seed.deserialize(IntoDeserializer::<Error>::into_deserializer(key.as_str()))
                    .map(Some)
                    .map_err(|e| e.at(Segment::Key(key.clone())))
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some((key, v)) => seed
                .deserialize(Strict(v))
                .map_err(|e| e.at(Segment::Key(key.clone()))),
            None => Err(de::Error::custom("a value was read before its key")),
        }
    }
}

/// A unit variant named by a string (`"openai"`). A string naming a variant that carries data is
/// refused at the variant (`kind.openai`), as serde_path_to_error named it.
struct UnitVariant<'a>(&'a str);

impl<'de> EnumAccess<'de> for UnitVariant<'_> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let name = IntoDeserializer::<Error>::into_deserializer(self.0);
        seed.deserialize(name).map(|v| (v, self))
    }
}

impl<'de> VariantAccess<'de> for UnitVariant<'_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value, Error> {
        Err(self.not_unit("newtype variant"))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, Error> {
        Err(self.not_unit("tuple variant"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Error> {
        Err(self.not_unit("struct variant"))
    }
}

impl UnitVariant<'_> {
    fn not_unit(&self, expected: &'static str) -> Error {
        let e: Error = de::Error::invalid_type(Unexpected::UnitVariant, &expected);
        e.at(Segment::Key(self.0.to_owned()))
    }
}

/// serde_json's error, and where in the body the value it is about sits.
#[derive(Debug)]
pub struct Error {
    inner: serde_json::Error,
    /// Innermost first: each level adds its own segment as the error passes it on the way out.
    path: Vec<Segment>,
}

#[derive(Debug)]
enum Segment {
    Key(String),
    Index(usize),
}

impl Error {
    fn at(mut self, segment: Segment) -> Self {
        self.path.push(segment);
        self
    }

    /// `breaker.window_ms`, `chain[1].spread[0].weight`; `.` for the body itself.
    pub fn path(&self) -> String {
        if self.path.is_empty() {
            return ".".to_owned();
        }
        let (mut out, mut separator) = (String::new(), "");
        for segment in self.path.iter().rev() {
            match segment {
                Segment::Key(key) => {
                    out.push_str(separator);
                    out.push_str(key);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
            separator = ".";
        }
        out
    }

    pub fn into_inner(self) -> serde_json::Error {
        self.inner
    }
}

impl From<serde_json::Error> for Error {
    fn from(inner: serde_json::Error) -> Self {
        Error {
            inner,
            path: Vec::new(),
        }
    }
}

/// serde_json's message alone: the path is the caller's to show.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl std::error::Error for Error {}

/// Every message as serde_json words it (`null` for a unit, its float notation).
impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        <serde_json::Error as de::Error>::custom(msg).into()
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        <serde_json::Error as de::Error>::invalid_type(unexp, exp).into()
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        <serde_json::Error as de::Error>::invalid_value(unexp, exp).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        #[serde(default)]
        n: Option<u32>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        id: String,
        #[serde(default)]
        inner: Inner,
        #[serde(default)]
        list: Vec<u64>,
        #[serde(default)]
        price: f64,
    }

    fn read<T: de::DeserializeOwned>(json: &str) -> Result<T, Error> {
        let v: Value = serde_json::from_str(json)?;
        T::deserialize(Strict(&v))
    }

    #[test]
    fn a_struct_is_an_object_never_an_array() {
        assert!(read::<Outer>(r#"["acme"]"#).is_err());
        assert!(read::<Outer>(r#"{"id":"a","inner":[null]}"#).is_err());
        assert!(read::<Outer>(r#"{"id":"a","inner":[5]}"#).is_err());
        let ok: Outer = read(r#"{"id":"a","inner":{"n":5},"list":[1,2],"price":0.5}"#).unwrap();
        assert_eq!(ok.inner.n, Some(5));
        assert_eq!(ok.list, [1, 2]);
    }

    #[test]
    fn an_integer_may_carry_a_zero_fraction_and_nothing_else() {
        let ok: Outer = read(r#"{"id":"a","inner":{"n":17.0},"list":[1e2],"price":3}"#).unwrap();
        assert_eq!((ok.inner.n, ok.list, ok.price), (Some(17), vec![100], 3.0));
        assert!(read::<Outer>(r#"{"id":"a","inner":{"n":17.5}}"#).is_err());
        assert!(read::<Outer>(r#"{"id":"a","inner":{"n":-1}}"#).is_err());
        assert!(
            read::<Outer>(r#"{"id":"a","inner":{"n":1e10}}"#).is_err(),
            "past u32"
        );
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_still_refused() {
        let e = read::<Outer>(r#"{"id":"a","colour":1}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `colour`"), "{e}");
        let e = read::<Outer>(r#"{"id":5}"#).unwrap_err().to_string();
        assert_eq!(e, "invalid type: integer `5`, expected a string");
    }
}
