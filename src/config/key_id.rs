//! How routing state names a provider key: by its id (`key_…`), never by the key itself.

use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::fmt;

/// A provider key's id as parks, plans and grants hold it. The id is derived from the key when
/// the provider is written (`config::ProviderKey`), so it is stable across reloads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KeyId(String);

impl KeyId {
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for KeyId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for KeyId {
    fn from(id: &str) -> Self {
        Self(id.to_owned())
    }
}

impl PartialEq<str> for KeyId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for KeyId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
