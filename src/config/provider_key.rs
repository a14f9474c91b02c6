//! The keys of a provider's pool in their three forms: as an admin gives them (`NewKey`), as D1
//! holds them (`StoredKey`, sealed or a secret's name), and usable on the request path
//! (`ProviderKey`). A key itself is never printed, logged or shown.

use super::ConfigError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// Keys shorter than this show no `last4` at all.
pub const MIN_KEY_FOR_LAST4: usize = 16;

/// A provider credential. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// A key opened from storage or a Worker secret; checked when it was first given.
    pub(super) fn opened(secret: String) -> Self {
        Self(secret)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The last four characters, shown so an admin can tell keys apart; `None` for a key shorter
    /// than [`MIN_KEY_FOR_LAST4`], where four characters would give away too much of it.
    pub fn last4(&self) -> Option<String> {
        let chars: Vec<char> = self.0.chars().collect();
        (chars.len() >= MIN_KEY_FOR_LAST4).then(|| chars[chars.len() - 4..].iter().collect())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// One key of a provider's pool. The id is derived from the key so it stays stable across
/// re-registration (park windows keep pointing at the same key) and reveals nothing of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderKey {
    pub id: String,
    pub secret: Secret,
}

impl ProviderKey {
    pub fn from_secret(secret: String) -> Result<Self, ConfigError> {
        Self::checked(secret, 1024)
    }

    /// A token-like key of at most `max` characters, with no whitespace.
    pub(super) fn checked(secret: String, max: usize) -> Result<Self, ConfigError> {
        if secret.is_empty() || secret.chars().count() > max {
            return Err(ConfigError::invalid(
                "keys",
                format!("each key must be 1 to {max} characters"),
            ));
        }
        if secret.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(ConfigError::invalid(
                "keys",
                "keys may not contain whitespace",
            ));
        }
        Ok(Self::derived(secret))
    }

    /// The key with its id, derived from it.
    pub(super) fn derived(secret: String) -> Self {
        let digest = Sha256::digest(secret.as_bytes());
        let id = format!("key_{}", ::hex::encode(&digest[..4]));
        Self {
            id,
            secret: Secret(secret),
        }
    }
}

/// A key as an admin gave it: the key itself, or the name of a Worker secret holding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewKey {
    Literal(ProviderKey),
    Secret { id: String, secret_name: String },
}

/// A key as D1 holds it: sealed under `CG_KEK`, or a secret's name. Never the key itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StoredKey {
    Sealed {
        id: String,
        /// `None` for short keys; rows written before that rule carry a string and still load.
        #[serde(default)]
        last4: Option<String>,
        /// Who the key is, for kinds whose keys say it (`cloud_key::account_of`); such a key
        /// shows no `last4`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        account: Option<String>,
        sealed: String,
    },
    Secret {
        id: String,
        secret_name: String,
    },
}

impl StoredKey {
    pub fn id(&self) -> &str {
        match self {
            Self::Sealed { id, .. } | Self::Secret { id, .. } => id,
        }
    }
}

/// Only Worker secrets named `PROVIDER_*` may be referenced as provider keys: any other var or
/// secret of the deployment (the gateway's own `CG_*` ones included) would otherwise be sent to a
/// `base_url` of the admin's choosing.
pub const SECRET_PREFIX: &str = "PROVIDER_";

pub fn secret_key_id(secret_name: &str) -> String {
    let digest = Sha256::digest(format!("secret:{secret_name}").as_bytes());
    format!("key_{}", ::hex::encode(&digest[..4]))
}

impl NewKey {
    pub fn secret(name: String) -> Result<Self, ConfigError> {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            return Err(ConfigError::invalid(
                "keys",
                "a secret name is [A-Z][A-Z0-9_]{0,63}",
            ));
        }
        if !name.starts_with(SECRET_PREFIX) || name.len() == SECRET_PREFIX.len() {
            return Err(ConfigError::invalid(
                "keys",
                format!("only Worker secrets named {SECRET_PREFIX}* can be used as provider keys"),
            ));
        }
        Ok(Self::Secret {
            id: secret_key_id(&name),
            secret_name: name,
        })
    }

    pub fn id(&self) -> &str {
        match self {
            Self::Literal(k) => &k.id,
            Self::Secret { id, .. } => id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_debug_never_prints_the_secret() {
        let key = ProviderKey::from_secret("sk-very-secret-1234".into());
        let shown = format!("{key:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
        assert_eq!(
            key.map(|k| k.secret.last4()).ok().flatten().as_deref(),
            Some("1234")
        );
    }

    #[test]
    fn a_sealed_key_stored_with_a_string_last4_or_none_still_loads() {
        for key in [
            r#"{"id":"key_1","last4":"abcd","sealed":"x"}"#,
            r#"{"id":"key_1","last4":null,"sealed":"x"}"#,
            r#"{"id":"key_1","sealed":"x"}"#,
        ] {
            let parsed: StoredKey = serde_json::from_str(key).unwrap();
            assert!(matches!(parsed, StoredKey::Sealed { .. }), "{key}");
        }
    }

    #[test]
    fn only_secrets_named_provider_star_can_be_referenced() {
        for name in [
            "CG_ADMIN",
            "CG_KEK",
            "OPENAI_API_KEY",
            "PROVIDER_",
            "lower",
            "PROVIDER_a",
        ] {
            let err = NewKey::secret(name.into()).err();
            assert_eq!(err.as_ref().and_then(|e| e.field()), Some("keys"), "{name}");
        }
        assert!(NewKey::secret("PROVIDER_OPENAI_2".into()).is_ok());
    }

    #[test]
    fn key_id_is_stable_for_the_same_key() {
        let a = ProviderKey::from_secret("sk-a".into()).map(|k| k.id);
        let b = ProviderKey::from_secret("sk-a".into()).map(|k| k.id);
        assert_eq!(a, b);
        assert_ne!(a, ProviderKey::from_secret("sk-b".into()).map(|k| k.id));
    }
}
