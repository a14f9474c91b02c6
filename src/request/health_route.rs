//! The two health routes a caller key may call, as one decision the edge runs: which providers'
//! routing objects to read, how the call counts against the key's `rpm`, and the answer.
//! `/v1/health` reads every provider of the tenant and its stored degraded mode;
//! `/v1/providers/health` reads only the providers the key's names reach (`routing::reach`).

use crate::api::endpoint::Endpoint;
use crate::api::ApiError;
use crate::config::{KeyPolicy, Provider, TenantConfig};
use crate::health::health_answer::{breaker_entries, keyed_answer};
use crate::health::provider_health::{provider_entry, providers_answer};
use crate::health::PassView;
use crate::request::identify::invalid_api_key;
use crate::routing::reach::providers_reached;
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthRoute {
    /// `/v1/health` with a key: the breakers not closed, and degraded mode.
    Breakers,
    /// `/v1/providers/health`: one entry per provider reached.
    Providers,
}

impl HealthRoute {
    /// `/v1/providers/health` is `Providers`; every other endpoint asked is `/v1/health`.
    pub fn of(endpoint: &Endpoint) -> Self {
        match endpoint {
            Endpoint::ProvidersHealth => Self::Providers,
            _ => Self::Breakers,
        }
    }

    /// The route's name among the calls a key's `rpm` counts.
    pub fn counted_as(self) -> &'static str {
        match self {
            Self::Breakers => "health",
            Self::Providers => "providers_health",
        }
    }

    /// The answer to a call without credentials: liveness, or 401 where a key is required.
    pub fn without_key(self) -> Result<Value, ApiError> {
        match self {
            Self::Breakers => Ok(json!({"status": "ok"})),
            Self::Providers => Err(invalid_api_key()),
        }
    }

    /// Whether the answer shows the tenant's stored degraded mode.
    pub fn reads_degraded(self) -> bool {
        self == Self::Breakers
    }

    /// The providers whose routing objects are read, one call each.
    pub fn providers<'c>(self, cfg: &'c TenantConfig, policy: &KeyPolicy) -> Vec<&'c Provider> {
        match self {
            Self::Breakers => cfg.providers.values().collect(),
            Self::Providers => providers_reached(cfg, policy)
                .into_iter()
                .filter_map(|p| cfg.providers.get(p))
                .collect(),
        }
    }

    /// The answer from each provider's view, read in `providers`' order (and, for `/v1/health`,
    /// since when it is degraded); a view that could not be read fails the whole answer.
    pub fn answer<E>(
        self,
        providers: Vec<&Provider>,
        views: Vec<Result<PassView, E>>,
        degraded_since: Option<u64>,
    ) -> Result<Value, E> {
        let views = providers.into_iter().zip(views);
        let views = views.map(|(p, v)| v.map(|v| (p, v)));
        let views = views.collect::<Result<Vec<_>, E>>()?;
        Ok(match self {
            Self::Breakers => {
                let breakers = views.into_iter();
                let breakers =
                    breakers.flat_map(|(p, v)| breaker_entries(p.name.as_str(), v.breakers));
                keyed_answer(breakers.collect(), degraded_since)
            }
            Self::Providers => {
                let entries = views.iter().map(|(p, v)| provider_entry(p, v));
                providers_answer(entries.collect())
            }
        })
    }
}
