//! The one reader of admin request bodies: strict JSON (`strict_json`) with the failing
//! field's path in the error.

use super::strict_json::Strict;
use super::ConfigError;
use serde::de::DeserializeOwned;

/// Parses JSON into `T`, naming the field that failed (`breaker.window_ms: invalid type ...`), by
/// the rules of `strict_json` (a struct is an object, `17.0` is an integer). One reader for every
/// admin type: only `T`'s own reading code is instantiated per type.
pub fn parse_body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ConfigError> {
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ConfigError::invalid("body", format!("malformed JSON ({e})")))?;
    T::deserialize(Strict(&value)).map_err(|err| {
        let path = err.path();
        let field = if path == "." { "body".to_owned() } else { path };
        ConfigError::Invalid {
            field,
            reason: strip_position(&err.into_inner().to_string()),
        }
    })
}

/// A body that may be left out: an empty one (no bytes at all) is `T::default()`, the "no change"
/// of a PATCH. A body that is present must be a JSON object, so whitespace alone, `null` or `[]`
/// is a 400, never taken for "no change".
pub fn parse_optional_body<T: DeserializeOwned + Default>(bytes: &[u8]) -> Result<T, ConfigError> {
    if bytes.is_empty() {
        Ok(T::default())
    } else {
        parse_body(bytes)
    }
}

/// serde_json appends "at line 1 column 42"; the field path already says where.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}
