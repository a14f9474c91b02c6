//! How stored config is shown to admins: never a provider key, only its id and last four characters.
//!
//! Every admin answer body is one of these typed views, so its JSON Schema can be derived (on the
//! host) and checked against `openapi.json` (`api::openapi_check`): a field added here and not to
//! the document fails the build. The functions keep the handlers' `Value` interface.

use crate::config::{
    Alias, AliasName, CapabilitySet, CatalogModel, Chain, CostTier, KeyStrategy, ModelId,
    ProviderKind, ProviderName, RateLimitSignal, RetryPolicy, RouteName, Settings, StoredKey,
    StoredProvider,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `{"data": [...]}`: every admin list.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct List<T> {
    pub data: Vec<T>,
}

/// `{"deleted": "<id or name>"}`: every admin delete.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct Deleted<'a> {
    pub deleted: &'a str,
}

/// A tenant as created and as read: its effective settings included.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct TenantView<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub created_at: u64,
    pub settings: Settings,
}

/// A tenant in the list of tenants.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize, Deserialize)]
pub struct TenantSummary {
    pub id: String,
    pub name: String,
    pub created_at: u64,
}

/// A caller key as listed: its id and creation time, never the key.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize, Deserialize)]
pub struct KeyView {
    pub id: String,
    pub created_at: u64,
}

/// A caller key just minted: the only answer that ever carries the key itself.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct NewKeyView<'a> {
    pub id: &'a str,
    pub key: &'a str,
    pub created_at: u64,
}

/// A provider: its keys as ids, last four characters and secret names.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct ProviderView<'a> {
    pub name: &'a ProviderName,
    pub kind: ProviderKind,
    pub base_url: &'a str,
    pub keys: Vec<KeyRef<'a>>,
    pub key_strategy: KeyStrategy,
    pub timeout_ms: u32,
    pub retry: RetryPolicy,
    pub rate_limit_signals: &'a [RateLimitSignal],
    pub auth_cooldown_ms: u64,
    /// `null` when unlimited.
    pub rpm: Option<u32>,
}

/// One key of a provider's pool as shown: never the key.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum KeyRef<'a> {
    /// A sealed key; `last4` is `null` for keys too short to show any of.
    Sealed { id: &'a str, last4: Option<&'a str> },
    /// A key held in a Worker secret, by the secret's name.
    Secret { id: &'a str, secret: &'a str },
}

impl<'a> From<&'a StoredProvider> for ProviderView<'a> {
    fn from(p: &'a StoredProvider) -> Self {
        let keys = p
            .keys
            .iter()
            .map(|k| match k {
                StoredKey::Sealed { id, last4, .. } => KeyRef::Sealed {
                    id,
                    last4: last4.as_deref(),
                },
                StoredKey::Secret { id, secret_name } => KeyRef::Secret {
                    id,
                    secret: secret_name,
                },
            })
            .collect();
        Self {
            name: &p.name,
            kind: p.kind,
            base_url: p.base_url.as_str(),
            keys,
            key_strategy: p.key_strategy,
            timeout_ms: p.timeout_ms,
            retry: p.resilience.retry,
            rate_limit_signals: &p.resilience.rate_limit_signals,
            auth_cooldown_ms: p.resilience.auth_cooldown_ms,
            rpm: p.resilience.rpm,
        }
    }
}

/// A catalog model.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct ModelView<'a> {
    pub id: &'a ModelId,
    pub provider: &'a ProviderName,
    pub upstream_model: &'a str,
    pub capabilities: &'a CapabilitySet,
    pub context_window: u32,
    pub input_price_per_mtok: f64,
    pub output_price_per_mtok: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_input_price_per_mtok: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

impl<'a> From<&'a CatalogModel> for ModelView<'a> {
    fn from(m: &'a CatalogModel) -> Self {
        Self {
            id: &m.id,
            provider: &m.provider,
            upstream_model: &m.upstream_model,
            capabilities: &m.capabilities,
            context_window: m.context_window,
            input_price_per_mtok: m.input_price_per_mtok,
            output_price_per_mtok: m.output_price_per_mtok,
            cached_input_price_per_mtok: m.cached_input_price_per_mtok,
            max_output_tokens: m.max_output_tokens,
        }
    }
}

/// An alias with its name.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct AliasView<'a> {
    pub name: &'a AliasName,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<&'a ModelId>,
    pub capabilities: &'a CapabilitySet,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_context_window: Option<u32>,
    pub provider_preference: &'a [ProviderName],
    pub cost_tier: CostTier,
}

impl<'a> AliasView<'a> {
    pub fn new(name: &'a AliasName, a: &'a Alias) -> Self {
        Self {
            name,
            pin: a.pin.as_ref(),
            capabilities: &a.capabilities,
            min_context_window: a.min_context_window,
            provider_preference: &a.provider_preference,
            cost_tier: a.cost_tier,
        }
    }
}

/// A routing rule as listed.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct RuleView<'a> {
    #[serde(rename = "match")]
    pub matches: &'a RouteName,
    pub chain: &'a Chain,
}

/// A routing rule as just written: with the chain entries that cannot serve today (a warning,
/// not a refusal: the catalog may catch up).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct WrittenRuleView<'a> {
    #[serde(rename = "match")]
    pub matches: &'a RouteName,
    pub chain: &'a Chain,
    pub warnings: Vec<String>,
}

/// A breaker event as stored and listed (`breaker.opened` / `breaker.closed`).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventView {
    /// The events table's order; not part of the stored body.
    #[serde(default)]
    pub seq: u64,
    pub event: String,
    pub tenant: String,
    pub provider: String,
    pub model: String,
    pub reason: String,
    pub time: u64,
    /// The routing object's own order of its breakers' transitions.
    pub transition_seq: u64,
    /// On `breaker.opened`: when the breaker half-opens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaker_until: Option<u64>,
    /// On `breaker.opened`: the open duration in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_ms: Option<u64>,
}

/// What a manual breaker reset closed.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct ResetView {
    pub closed: Vec<ClosedBreaker>,
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Serialize)]
pub struct ClosedBreaker {
    pub provider: String,
    pub model: String,
}

/// A view as JSON; serializing these plain structs cannot fail, and `null` would show if it did.
fn to_value<T: Serialize>(view: &T) -> Value {
    serde_json::to_value(view).unwrap_or_default()
}

pub fn provider(p: &StoredProvider) -> Value {
    to_value(&ProviderView::from(p))
}

pub fn model(m: &CatalogModel) -> Value {
    to_value(&ModelView::from(m))
}

pub fn alias(name: &AliasName, a: &Alias) -> Value {
    to_value(&AliasView::new(name, a))
}

pub fn rule(matches: &RouteName, chain: &Chain) -> Value {
    to_value(&RuleView { matches, chain })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::{parse_body, AliasBody, ModelBody, ProviderBody};
    use crate::config::sealed::Kek;
    use crate::config::TenantId;
    use serde_json::json;

    fn stored_provider(body: &[u8]) -> StoredProvider {
        let p: ProviderBody = parse_body(body).unwrap();
        let kek = Kek::from_hex(&"11".repeat(32)).unwrap();
        let tenant = TenantId::parse("acme").unwrap();
        p.validate(ProviderName::parse("openai").unwrap())
            .unwrap()
            .seal(&tenant, Some(&kek), || Some([3; 12]))
            .unwrap()
    }

    #[test]
    fn provider_view_shows_key_ids_last_four_and_secret_names_only() {
        let p = stored_provider(
            br#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["sk-live-abcdefgh1234",{"secret":"PROVIDER_OPENAI_2"}]}"#,
        );
        let shown = provider(&p).to_string();
        assert!(!shown.contains("sk-live-abcdefgh1234"));
        assert!(!shown.contains("abcdefgh"));
        assert!(!shown.contains("sealed") && !shown.contains("v1:"));
        assert!(shown.contains(r#""last4":"1234""#));
        assert!(shown.contains(r#""secret":"PROVIDER_OPENAI_2""#));
        assert!(shown.contains(p.keys[0].id()));
    }

    #[test]
    fn the_typed_views_answer_the_same_json_as_before_them() {
        let p = stored_provider(
            br#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["sk-1",{"secret":"PROVIDER_X"}],"rate_limit_signals":["x-ratelimit-reset"]}"#,
        );
        assert_eq!(
            provider(&p),
            json!({"name": "openai", "kind": "openai", "base_url": "https://api.openai.com/v1",
                "keys": [{"id": p.keys[0].id(), "last4": null}, {"id": p.keys[1].id(), "secret": "PROVIDER_X"}],
                "key_strategy": "round_robin", "timeout_ms": 30000,
                "retry": {"max_retries": 0, "base_delay_ms": 100, "max_delay_ms": 2000},
                "rate_limit_signals": ["x-ratelimit-reset"], "auth_cooldown_ms": 0, "rpm": null})
        );
        let id = ModelId::parse("meta/llama").unwrap();
        for body in [
            &br#"{"provider":"p","context_window":8000}"#[..],
            br#"{"provider":"p","context_window":8000,"max_output_tokens":10,"capabilities":["tools"],"cached_input_price_per_mtok":0.5}"#,
        ] {
            let m = parse_body::<ModelBody>(body)
                .unwrap()
                .validate(id.clone())
                .unwrap();
            assert_eq!(model(&m), json!(m), "{m:?}");
        }
        let name = AliasName::parse("fast").unwrap();
        for body in [
            &br#"{}"#[..],
            br#"{"pin":"m","min_context_window":5,"provider_preference":["a"],"cost_tier":"best"}"#,
        ] {
            let a = parse_body::<AliasBody>(body).unwrap().validate().unwrap();
            let mut before = json!(a);
            before["name"] = json!(name);
            assert_eq!(alias(&name, &a), before, "{a:?}");
        }
        let matches = RouteName::parse("best").unwrap();
        let chain = Chain::new(vec![matches.clone()], 5).unwrap();
        assert_eq!(
            rule(&matches, &chain),
            json!({"match": "best", "chain": ["best"]})
        );
    }
}
