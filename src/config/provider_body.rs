//! The admin body of a provider: its kind, address, keys and resilience, parsed strictly and
//! validated into a `NewProvider` in one step (`admin_body::parse_body` reads it).

use super::names::ProviderName;
use super::provider::{
    BaseUrl, Cloud, KeyStrategy, NewKey, NewProvider, Platform, ProviderKey, ProviderKind,
    Publisher,
};
use super::{ConfigError, NonEmpty, RateLimitSignal, Resilience, RetryPolicy};
use serde::Deserialize;

/// `"sk-..."`, or `{"secret": "PROVIDER_OPENAI_2"}` naming a Worker secret. A struct variant,
/// not a newtype around a struct: serde reads an untagged struct variant from an object only.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum KeyInput {
    Literal(String),
    Secret { secret: String },
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderBody {
    pub kind: ProviderKind,
    pub base_url: BaseUrl,
    pub keys: Vec<KeyInput>,
    #[serde(default)]
    pub key_strategy: KeyStrategy,
    #[serde(default)]
    pub timeout_ms: Option<u32>,
    #[serde(default)]
    pub retry: Option<RetryPolicy>,
    #[serde(default)]
    pub rate_limit_signals: Vec<RateLimitSignal>,
    #[serde(default)]
    pub auth_cooldown_ms: Option<u64>,
    #[serde(default)]
    pub rpm: Option<u32>,
    pub max_park_ms: Option<u64>,
    pub rate_limit_cooldown_ms: Option<u64>,
    /// `azure_openai`: the `api-version` every call carries.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `bedrock` and `vertex`: the region (Vertex's location).
    #[serde(default)]
    pub region: Option<String>,
    /// `vertex`: the Google Cloud project.
    #[serde(default)]
    pub project: Option<String>,
    /// `vertex`: whose models it calls.
    #[serde(default)]
    pub publisher: Option<Publisher>,
    /// Overrides the platform the kind and host imply.
    #[serde(default)]
    pub platform: Option<Platform>,
}

pub const MAX_KEYS: usize = 64;
pub const DEFAULT_TIMEOUT_MS: u32 = 30_000;

impl ProviderBody {
    pub fn validate(self, name: ProviderName) -> Result<NewProvider, ConfigError> {
        let count_error =
            || ConfigError::invalid("keys", format!("must list 1 to {MAX_KEYS} keys"));
        if self.keys.len() > MAX_KEYS {
            return Err(count_error());
        }
        let mut keys: Vec<NewKey> = Vec::with_capacity(self.keys.len());
        for (i, input) in self.keys.into_iter().enumerate() {
            let key = match input {
                KeyInput::Literal(secret) => {
                    NewKey::Literal(ProviderKey::of_kind(self.kind, i, secret)?)
                }
                KeyInput::Secret { secret } => NewKey::secret(secret)?,
            };
            if keys.iter().any(|k| k.id() == key.id()) {
                return Err(ConfigError::invalid("keys", "the same key is listed twice"));
            }
            keys.push(key);
        }
        let keys = NonEmpty::new(keys).ok_or_else(count_error)?;
        let timeout_ms = self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !(1..=600_000).contains(&timeout_ms) {
            return Err(ConfigError::invalid("timeout_ms", "must be 1 to 600000"));
        }
        let cloud = Cloud {
            api_version: self.api_version,
            region: self.region,
            project: self.project,
            publisher: self.publisher,
            platform: self.platform,
        }
        .validate(self.kind)?;
        Ok(NewProvider {
            name,
            kind: self.kind,
            cloud,
            base_url: self.base_url,
            keys,
            key_strategy: self.key_strategy,
            timeout_ms,
            resilience: Resilience::validate(
                self.retry,
                self.rate_limit_signals,
                self.auth_cooldown_ms,
                self.rpm,
                (self.max_park_ms, self.rate_limit_cooldown_ms),
            )?,
        })
    }
}
