//! A tenant's upstream provider: where it lives and the pool of keys it is called with.

pub use super::base_url::BaseUrl;
pub use super::cloud::{platform_of, Cloud, Platform, Publisher};
use super::cloud_key::{account_of, usable_at_load};
pub use super::config_rows::Opening;
use super::key_id::KeyId;
use super::names::{ProviderName, TenantId};
use super::non_empty::NonEmpty;
pub use super::provider_key::{
    secret_key_id, NewKey, ProviderKey, Secret, StoredKey, MIN_KEY_FOR_LAST4, SECRET_PREFIX,
};
use super::resilience::Resilience;
use super::sealed::Kek;
use super::ConfigError;
use serde::{Deserialize, Serialize};

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any API that speaks OpenAI's chat completions (OpenAI, Together, Groq, vLLM, Ollama).
    Openai,
    /// Anthropic's Messages API; requests and answers are translated both ways.
    Anthropic,
    /// Azure OpenAI: OpenAI's shapes at a deployment path, with an `api-key` header.
    AzureOpenai,
    /// AWS Bedrock's Converse API, signed with SigV4 or called with a Bedrock API key.
    Bedrock,
    /// Google Vertex AI: Anthropic's or Google's models, by `publisher`.
    Vertex,
    /// Google's Gemini API (`generateContent`).
    Gemini,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
            Self::AzureOpenai => "azure_openai",
            Self::Bedrock => "bedrock",
            Self::Vertex => "vertex",
            Self::Gemini => "gemini",
        }
    }
}

/// Which key a request starts from; any way the whole pool is tried before the cascade moves on.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyStrategy {
    #[default]
    RoundRobin,
    Failover,
    /// The key with the most headroom first (`health::headroom`); ties round-robin.
    MostRemaining,
}

/// A provider with its pool of keys in one of three forms: `NewProvider` straight from the admin
/// body, `StoredProvider` as D1 holds it, `Provider` with usable keys for the request path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSpec<K> {
    pub name: ProviderName,
    pub kind: ProviderKind,
    pub base_url: BaseUrl,
    /// The admin parser refuses an empty pool, and a provider none of whose keys can be opened
    /// does not load.
    pub keys: NonEmpty<K>,
    pub key_strategy: KeyStrategy,
    pub timeout_ms: u32,
    /// The opt-ins; absent in rows stored before them, which load with the defaults.
    #[serde(flatten)]
    pub resilience: Resilience,
    /// What the kind needs beyond `base_url`, and the platform override.
    #[serde(flatten)]
    pub cloud: Cloud,
}

pub type NewProvider = ProviderSpec<NewKey>;
pub type StoredProvider = ProviderSpec<StoredKey>;
pub type Provider = ProviderSpec<ProviderKey>;

impl<K> ProviderSpec<K> {
    fn with_keys<J>(self, keys: NonEmpty<J>) -> ProviderSpec<J> {
        ProviderSpec {
            name: self.name,
            kind: self.kind,
            base_url: self.base_url,
            keys,
            key_strategy: self.key_strategy,
            timeout_ms: self.timeout_ms,
            resilience: self.resilience,
            cloud: self.cloud,
        }
    }

    /// The platform this provider runs on (`X-CogniGate-Platform`, the platform pin).
    pub fn platform(&self) -> Platform {
        platform_of(self.kind, &self.cloud, self.base_url.as_str())
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
        let keys = self.keys.try_map(|key| {
            Ok(match key {
                NewKey::Literal(k) => {
                    let kek = kek.ok_or_else(|| {
                        ConfigError::invalid("keys", "CG_KEK is not configured, so keys cannot be stored; reference a Worker secret instead")
                    })?;
                    let account = account_of(self.kind, k.secret.expose());
                    StoredKey::Sealed {
                        id: k.id.clone(),
                        last4: k.secret.last4().filter(|_| account.is_none()),
                        account,
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
            })
        })?;
        Ok(self.with_keys(keys))
    }

    /// Usable at once, with secret names looked up through `lookup` (tests; no storage involved);
    /// `None` when no key resolves.
    pub fn resolve(self, lookup: impl Fn(&str) -> Option<String>) -> Option<Provider> {
        let keys = self
            .keys
            .iter()
            .filter_map(|k| match k {
                NewKey::Literal(k) => Some(k.clone()),
                NewKey::Secret { id, secret_name } => lookup(secret_name).map(|s| ProviderKey {
                    id: id.clone(),
                    secret: Secret::opened(s),
                }),
            })
            .collect();
        NonEmpty::new(keys).map(|keys| self.with_keys(keys))
    }
}

impl StoredProvider {
    /// The provider with its usable keys (`None` when no key can be used: it cannot serve), and
    /// why any other key could not be used (for the log, never a response).
    pub fn open(
        &self,
        tenant: &TenantId,
        opening: &Opening<'_>,
    ) -> (Option<Provider>, Vec<String>) {
        let mut problems = Vec::new();
        let mut keys = Vec::with_capacity(self.keys.len());
        for k in self.keys.iter() {
            let opened = match (k, opening.kek) {
                (StoredKey::Sealed { sealed, .. }, Some(kek)) => kek
                    .open(tenant, &self.name, sealed)
                    .map_err(|e| e.to_string()),
                (StoredKey::Sealed { .. }, None) => Err("CG_KEK is not configured".to_owned()),
                (StoredKey::Secret { secret_name, .. }, _) => (opening.secret)(secret_name)
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| format!("secret {secret_name} is not set")),
            };
            let opened = opened.and_then(|secret| {
                usable_at_load(self.kind, &secret, opening.allow_http).map(|()| secret)
            });
            match opened {
                Ok(secret) => keys.push(ProviderKey {
                    id: k.id().to_owned(),
                    secret: Secret::opened(secret),
                }),
                Err(why) => problems.push(format!("key {}: {why}", k.id())),
            }
        }
        let usable = NonEmpty::new(keys).map(|keys| self.clone().with_keys(keys));
        (usable, problems)
    }
}

impl Provider {
    pub fn key(&self, id: &str) -> Option<&ProviderKey> {
        self.keys.iter().find(|k| k.id == id)
    }

    pub fn key_ids(&self) -> Vec<KeyId> {
        self.keys
            .iter()
            .map(|k| KeyId::new(k.id.as_str()))
            .collect()
    }
}

/// The provider `p` of an admin body's JSON, its keys literal: the tests' one way to make one.
#[cfg(test)]
pub fn test_provider(body: &str) -> Provider {
    use super::admin_body::{parse_body, ProviderBody};
    let b: ProviderBody = parse_body(body.as_bytes()).unwrap();
    b.validate(ProviderName::parse("p").unwrap())
        .unwrap()
        .resolve(|_| None)
        .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let opening = Opening {
            kek: Some(&kek),
            allow_http: false,
            secret: &lookup,
        };
        let (p, problems) = stored.open(&tenant, &opening);
        assert!(problems.is_empty());
        let p = p.unwrap();
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
        let opening = Opening {
            kek: Some(&kek),
            allow_http: false,
            secret: &|_| None,
        };
        let (p, problems) = stored.open(&other_tenant, &opening);
        assert!(p.is_none(), "no usable key: the provider does not load");
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
}
