//! A tenant's upstream provider: where it lives and the pool of keys it is called with.

pub use super::base_url::BaseUrl;
use super::names::{ProviderName, TenantId};
use super::resilience::Resilience;
use super::sealed::Kek;
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

/// Keys shorter than this show no `last4` at all.
pub const MIN_KEY_FOR_LAST4: usize = 16;

/// A provider credential. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
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

/// A provider with its pool of keys in one of three forms: `NewProvider` straight from the admin
/// body, `StoredProvider` as D1 holds it, `Provider` with usable keys for the request path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSpec<K> {
    pub name: ProviderName,
    pub kind: ProviderKind,
    pub base_url: BaseUrl,
    /// Never empty: the admin parser refuses an empty pool, and loading drops a provider none of
    /// whose keys can be opened.
    pub keys: Vec<K>,
    pub key_strategy: KeyStrategy,
    pub timeout_ms: u32,
    /// Issue 17's opt-ins; absent in rows stored before them, which load with the defaults.
    #[serde(flatten)]
    pub resilience: Resilience,
}

pub type NewProvider = ProviderSpec<NewKey>;
pub type StoredProvider = ProviderSpec<StoredKey>;
pub type Provider = ProviderSpec<ProviderKey>;

impl<K> ProviderSpec<K> {
    fn with_keys<J>(self, keys: Vec<J>) -> ProviderSpec<J> {
        ProviderSpec {
            name: self.name,
            kind: self.kind,
            base_url: self.base_url,
            keys,
            key_strategy: self.key_strategy,
            timeout_ms: self.timeout_ms,
            resilience: self.resilience,
        }
    }
}

/// Only Worker secrets named `PROVIDER_*` may be referenced as provider keys: any other var or
/// secret of the deployment (the gateway's own `CG_*` ones included) would otherwise be sent to a
/// `base_url` of the admin's choosing.
pub const SECRET_PREFIX: &str = "PROVIDER_";

pub fn secret_key_id(secret_name: &str) -> String {
    let digest = Sha256::digest(format!("secret:{secret_name}").as_bytes());
    format!("key_{}", hex(&digest[..4]))
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

impl NewProvider {
    /// Seals literal keys, each under a fresh nonce from `nonce` (`None`: no randomness to be
    /// had, and nothing is sealed); secret names are stored as names.
    pub fn seal(
        self,
        tenant: &TenantId,
        kek: Option<&Kek>,
        mut nonce: impl FnMut() -> Option<[u8; 12]>,
    ) -> Result<StoredProvider, ConfigError> {
        let mut keys = Vec::with_capacity(self.keys.len());
        for key in &self.keys {
            keys.push(match key {
                NewKey::Literal(k) => {
                    let kek = kek.ok_or_else(|| {
                        ConfigError::invalid("keys", "CG_KEK is not configured, so keys cannot be stored; reference a Worker secret instead")
                    })?;
                    StoredKey::Sealed {
                        id: k.id.clone(),
                        last4: k.secret.last4(),
                        sealed: kek.seal(
                            tenant,
                            &self.name,
                            k.secret.expose(),
                            nonce().ok_or_else(|| ConfigError::invalid("keys", "no randomness available to seal them"))?,
                        )?,
                    }
                }
                NewKey::Secret { id, secret_name } => StoredKey::Secret {
                    id: id.clone(),
                    secret_name: secret_name.clone(),
                },
            });
        }
        Ok(self.with_keys(keys))
    }

    /// Usable at once, with secret names looked up through `lookup` (tests; no storage involved).
    pub fn resolve(self, lookup: impl Fn(&str) -> Option<String>) -> Provider {
        let keys = self
            .keys
            .iter()
            .filter_map(|k| match k {
                NewKey::Literal(k) => Some(k.clone()),
                NewKey::Secret { id, secret_name } => lookup(secret_name).map(|s| ProviderKey {
                    id: id.clone(),
                    secret: Secret(s),
                }),
            })
            .collect();
        self.with_keys(keys)
    }
}

impl StoredProvider {
    /// The usable keys, and why any other could not be used (for the log, never a response).
    pub fn open(
        &self,
        tenant: &TenantId,
        kek: Option<&Kek>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> (Provider, Vec<String>) {
        let mut problems = Vec::new();
        let mut keys = Vec::with_capacity(self.keys.len());
        for k in &self.keys {
            let opened = match (k, kek) {
                (StoredKey::Sealed { sealed, .. }, Some(kek)) => kek
                    .open(tenant, &self.name, sealed)
                    .map_err(|e| e.to_string()),
                (StoredKey::Sealed { .. }, None) => Err("CG_KEK is not configured".to_owned()),
                (StoredKey::Secret { secret_name, .. }, _) => lookup(secret_name)
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| format!("secret {secret_name} is not set")),
            };
            match opened {
                Ok(secret) => keys.push(ProviderKey {
                    id: k.id().to_owned(),
                    secret: Secret(secret),
                }),
                Err(why) => problems.push(format!("key {}: {why}", k.id())),
            }
        }
        (self.clone().with_keys(keys), problems)
    }
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
    fn keys_shorter_than_16_characters_show_no_last4_never_the_whole_key() {
        let last4 = |s: &str| ProviderKey::from_secret(s.into()).map(|k| k.secret.last4());
        assert_eq!(last4("sk-1"), Ok(None));
        assert_eq!(last4("abcdefghijklmno"), Ok(None));
        assert_eq!(last4("abcdefghijklmnop"), Ok(Some("mnop".to_owned())));
        let tenant = TenantId::parse("acme").unwrap();
        let kek = Kek::from_hex(&"22".repeat(32)).unwrap();
        let stored = new_provider(r#"["sk-short"]"#)
            .seal(&tenant, Some(&kek), || Some([9; 12]))
            .unwrap();
        let json = serde_json::to_string(&stored).unwrap();
        assert!(json.contains(r#""last4":null"#), "{json}");
        assert!(!json.contains("short"), "{json}");
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

    fn new_provider(keys: &str) -> NewProvider {
        let body: crate::config::admin_body::ProviderBody = crate::config::admin_body::parse_body(
            format!(r#"{{"kind":"openai","base_url":"https://x/v1","keys":{keys}}}"#).as_bytes(),
        )
        .unwrap();
        body.validate(ProviderName::parse("p").unwrap()).unwrap()
    }

    #[test]
    fn stored_keys_open_and_secret_names_resolve_at_load() {
        let kek = Kek::from_hex(&"22".repeat(32)).unwrap();
        let tenant = TenantId::parse("acme").unwrap();
        let stored = new_provider(r#"["sk-literal",{"secret":"PROVIDER_OPENAI_2"}]"#)
            .seal(&tenant, Some(&kek), || Some([9; 12]))
            .unwrap();
        let json = serde_json::to_string(&stored).unwrap();
        assert!(!json.contains("sk-literal"), "{json}");
        let lookup = |n: &str| (n == "PROVIDER_OPENAI_2").then(|| "sk-from-secret".to_owned());
        let (p, problems) = stored.open(&tenant, Some(&kek), lookup);
        assert!(problems.is_empty());
        let secrets: Vec<&str> = p.keys.iter().map(|k| k.secret.expose()).collect();
        assert_eq!(secrets, ["sk-literal", "sk-from-secret"]);
    }

    #[test]
    fn keys_that_cannot_be_opened_are_left_out_and_named() {
        let kek = Kek::from_hex(&"22".repeat(32)).unwrap();
        let tenant = TenantId::parse("acme").unwrap();
        let stored = new_provider(r#"["sk-literal",{"secret":"PROVIDER_MISSING"}]"#)
            .seal(&tenant, Some(&kek), || Some([9; 12]))
            .unwrap();
        let other_tenant = TenantId::parse("other").unwrap();
        let (p, problems) = stored.open(&other_tenant, Some(&kek), |_| None);
        assert!(p.keys.is_empty());
        assert_eq!(problems.len(), 2);
        assert!(problems.iter().all(|p| !p.contains("sk-literal")));
    }

    #[test]
    fn literal_keys_need_the_kek_but_secret_names_do_not() {
        let tenant = TenantId::parse("acme").unwrap();
        assert!(new_provider(r#"["sk-x"]"#)
            .seal(&tenant, None, || Some([0; 12]))
            .is_err());
        assert!(new_provider(r#"[{"secret":"PROVIDER_K"}]"#)
            .seal(&tenant, None, || Some([0; 12]))
            .is_ok());
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
