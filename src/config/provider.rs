//! A tenant's upstream provider: where it lives and the pool of keys it is called with.

use super::names::ProviderName;
use super::ConfigError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any API that speaks OpenAI's chat completions (OpenAI, Together, Groq, vLLM, Ollama).
    Openai,
    /// Anthropic's Messages API; requests and answers are translated both ways.
    Anthropic,
}

/// Which key a request starts from; either way the whole pool is tried before the cascade moves on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyStrategy {
    #[default]
    RoundRobin,
    Failover,
}

/// An `http(s)://host[:port][/path]` prefix without a trailing slash, query or fragment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct BaseUrl(String);

impl BaseUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn join(&self, path: &str) -> String {
        format!("{}/{}", self.0, path.trim_start_matches('/'))
    }
}

impl TryFrom<String> for BaseUrl {
    type Error = ConfigError;
    fn try_from(s: String) -> Result<Self, ConfigError> {
        let bad = |why: &str| ConfigError::invalid("base_url", why);
        let rest = s
            .strip_prefix("https://")
            .or_else(|| s.strip_prefix("http://"))
            .ok_or_else(|| bad("must start with http:// or https://"))?;
        let host = rest.split('/').next().unwrap_or_default();
        if host.is_empty() {
            return Err(bad("must name a host"));
        }
        if s.len() > 2048 {
            return Err(bad("must be at most 2048 characters"));
        }
        if host.contains('@') || s.contains(['?', '#']) {
            return Err(bad("may not carry credentials, a query or a fragment"));
        }
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("may not contain whitespace"));
        }
        Ok(Self(s.trim_end_matches('/').to_owned()))
    }
}

impl From<BaseUrl> for String {
    fn from(u: BaseUrl) -> String {
        u.0
    }
}

/// A provider credential. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn last4(&self) -> String {
        let chars: Vec<char> = self.0.chars().collect();
        chars[chars.len().saturating_sub(4)..].iter().collect()
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
        if secret.is_empty() || secret.len() > 1024 {
            return Err(ConfigError::invalid(
                "keys",
                "each key must be 1 to 1024 characters",
            ));
        }
        if secret.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(ConfigError::invalid(
                "keys",
                "keys may not contain whitespace",
            ));
        }
        let digest = Sha256::digest(secret.as_bytes());
        let id = format!("key_{}", hex(&digest[..4]));
        Ok(Self {
            id,
            secret: Secret(secret),
        })
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provider {
    pub name: ProviderName,
    pub kind: ProviderKind,
    pub base_url: BaseUrl,
    /// Never empty: the admin parser refuses an empty pool.
    pub keys: Vec<ProviderKey>,
    pub key_strategy: KeyStrategy,
    pub timeout_ms: u32,
}

impl Provider {
    pub fn key(&self, id: &str) -> Option<&ProviderKey> {
        self.keys.iter().find(|k| k.id == id)
    }

    pub fn key_ids(&self) -> Vec<String> {
        self.keys.iter().map(|k| k.id.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_drops_trailing_slash_and_refuses_credentials() {
        assert_eq!(
            BaseUrl::try_from("https://api.openai.com/v1/".to_owned()).map(String::from),
            Ok("https://api.openai.com/v1".to_owned())
        );
        assert!(BaseUrl::try_from("ftp://x".to_owned()).is_err());
        assert!(BaseUrl::try_from("https://user:pw@host".to_owned()).is_err());
        assert!(BaseUrl::try_from("https://".to_owned()).is_err());
        assert!(BaseUrl::try_from("http://127.0.0.1:9000/v1".to_owned()).is_ok());
    }

    #[test]
    fn key_debug_never_prints_the_secret() {
        let key = ProviderKey::from_secret("sk-very-secret-1234".into());
        let shown = format!("{key:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
        assert_eq!(key.map(|k| k.secret.last4()).ok().as_deref(), Some("1234"));
    }

    #[test]
    fn key_id_is_stable_for_the_same_key() {
        let a = ProviderKey::from_secret("sk-a".into()).map(|k| k.id);
        let b = ProviderKey::from_secret("sk-a".into()).map(|k| k.id);
        assert_eq!(a, b);
        assert_ne!(a, ProviderKey::from_secret("sk-b".into()).map(|k| k.id));
    }
}
