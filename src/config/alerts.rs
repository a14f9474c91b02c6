//! `alerts` settings: where a tenant's events are POSTed and which ones. The signing
//! secret is not part of the settings: it is generated when a `webhook_url` is set, shown once in
//! that PUT's answer, and stored sealed under `CG_KEK` beside the settings (`seal_alert_secret`).

use super::ConfigError;
use serde::{Deserialize, Serialize};

/// The events a webhook may subscribe to.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum AlertEvent {
    #[serde(rename = "breaker.opened")]
    BreakerOpened,
    #[serde(rename = "breaker.closed")]
    BreakerClosed,
    #[serde(rename = "budget.exceeded")]
    BudgetExceeded,
    #[serde(rename = "tenant.degraded")]
    TenantDegraded,
    #[serde(rename = "tenant.recovered")]
    TenantRecovered,
}

impl AlertEvent {
    pub const ALL: [Self; 5] = [
        Self::BreakerOpened,
        Self::BreakerClosed,
        Self::BudgetExceeded,
        Self::TenantDegraded,
        Self::TenantRecovered,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::BreakerOpened => "breaker.opened",
            Self::BreakerClosed => "breaker.closed",
            Self::BudgetExceeded => "budget.exceeded",
            Self::TenantDegraded => "tenant.degraded",
            Self::TenantRecovered => "tenant.recovered",
        }
    }

    pub fn parse(kind: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == kind)
    }
}

fn all_events() -> Vec<AlertEvent> {
    AlertEvent::ALL.to_vec()
}

/// `alerts` as a tenant writes it. `events` absent is every event.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alerts {
    pub webhook_url: WebhookUrl,
    #[serde(default = "all_events")]
    pub events: Vec<AlertEvent>,
    /// The signing secret: only in the answer of the PUT that set a new `webhook_url` (never
    /// read from a body, never stored here).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl Alerts {
    pub fn wants(&self, kind: &str) -> bool {
        AlertEvent::parse(kind).is_some_and(|e| self.events.contains(&e))
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.events.is_empty() {
            return Err(ConfigError::invalid(
                "alerts.events",
                "must list at least one event (null alerts for none)",
            ));
        }
        Ok(())
    }
}

/// An `https://` URL on a public host (plain http, and a loopback or private host, only under
/// `ALLOW_HTTP_UPSTREAMS`, the local-development switch), without credentials or a fragment. A
/// query is allowed: many receivers put a token there.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct WebhookUrl(String);

const FIELD: &str = "alerts.webhook_url";

impl WebhookUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Where the gateway may POST (`reach`). Checked when the URL is written and again before
    /// each delivery.
    pub fn check_reach(&self, allow_local: bool) -> Result<(), ConfigError> {
        reach(FIELD, &self.0, allow_local)
    }
}

/// Where the gateway may POST on a tenant's word: the transport rule of a provider's `base_url`
/// (`BaseUrl::check_transport`), and no host of the deployment's own or a private network
/// (`local_host`), both lifted by the same switch, for local development (`allow_local`).
pub fn reach(field: &str, url: &str, allow_local: bool) -> Result<(), ConfigError> {
    super::base_url::transport(field, url.starts_with("https://"), allow_local)?;
    if allow_local {
        return Ok(());
    }
    let parsed = url::Url::parse(url)
        .map_err(|e| ConfigError::invalid(field, format!("is not a valid URL ({e})")))?;
    if parsed
        .host()
        .as_ref()
        .is_none_or(super::local_host::is_local)
    {
        return Err(ConfigError::invalid(
            field,
            format!(
                "may not name localhost or a loopback, private, link-local or unique-local \
                 address (the deployment var {} = \"true\" allows it, for local development)",
                super::base_url::ALLOW_HTTP_VAR
            ),
        ));
    }
    Ok(())
}

/// A URL the gateway POSTs to, as written: http(s), no credentials, no fragment. A query is
/// allowed: many receivers put a token there.
pub fn post_url(s: &str, field: &str) -> Result<String, ConfigError> {
    let url = super::base_url::http_url(s, field)?;
    if url.fragment().is_some() {
        return Err(ConfigError::invalid(field, "may not carry a fragment"));
    }
    Ok(url.as_str().to_owned())
}

impl TryFrom<String> for WebhookUrl {
    type Error = ConfigError;
    fn try_from(s: String) -> Result<Self, ConfigError> {
        post_url(&s, FIELD).map(Self)
    }
}

impl From<WebhookUrl> for String {
    fn from(u: WebhookUrl) -> Self {
        u.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_url_is_https_only_unless_the_deployment_allows_http() {
        let https = WebhookUrl::try_from("https://hooks.example.com/x?t=1".to_owned()).unwrap();
        assert!(https.check_reach(false).is_ok());
        let http = WebhookUrl::try_from("http://hooks.example.com/hook".to_owned()).unwrap();
        let e = http.check_reach(false).unwrap_err();
        assert_eq!(e.field(), Some("alerts.webhook_url"));
        assert!(http.check_reach(true).is_ok());
        for bad in ["ftp://x", "https://u:p@x/", "https://x/#f", "https:///x"] {
            let e = WebhookUrl::try_from(bad.to_owned()).unwrap_err();
            assert_eq!(e.field(), Some("alerts.webhook_url"), "{bad}");
        }
    }

    #[test]
    fn a_webhook_on_a_local_or_private_host_is_refused_unless_the_deployment_allows_it() {
        for url in [
            "https://127.0.0.1/hook",
            "https://localhost/x",
            "https://10.0.0.1/",
            "https://[fd12::1]:8443/x",
            "https://0x7f.1/",
        ] {
            let hook = WebhookUrl::try_from(url.to_owned()).unwrap();
            let e = hook.check_reach(false).unwrap_err();
            assert_eq!(e.field(), Some("alerts.webhook_url"), "{url}");
            assert!(e.to_string().contains("private"), "{url}: {e}");
            assert!(hook.check_reach(true).is_ok(), "{url}");
        }
    }

    #[test]
    fn events_default_to_all_and_a_secret_in_a_body_is_refused() {
        let a: Alerts = serde_json::from_str(r#"{"webhook_url":"https://h.example/"}"#).unwrap();
        assert_eq!(a.events, AlertEvent::ALL.to_vec());
        assert!(a.wants("tenant.degraded") && !a.wants("probe"));
        assert!(serde_json::from_str::<Alerts>(
            r#"{"webhook_url":"https://h.example/","secret":"mine"}"#
        )
        .is_err());
        assert!(serde_json::from_str::<Alerts>(
            r#"{"webhook_url":"https://h.example/","events":["breaker.melted"]}"#
        )
        .is_err());
    }
}
