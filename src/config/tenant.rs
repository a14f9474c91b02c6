//! Everything one tenant has configured, as the request path reads it.

use super::{Alias, AliasName, CatalogModel, ModelId, Provider, ProviderName, RuleSet};
use super::{Settings, TenantId};
use crate::config::SortedMap;
use std::cell::OnceCell;

/// Built once from storage, then read-only: the request path shares it behind an `Rc`.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantConfig {
    pub tenant: TenantId,
    pub providers: SortedMap<ProviderName, Provider>,
    pub models: SortedMap<ModelId, CatalogModel>,
    pub aliases: SortedMap<AliasName, Alias>,
    /// Per requested name, its rules in the order they are tried.
    pub rules: RuleSet,
    pub settings: Settings,
    /// When each model id and alias name took its current definition (epoch seconds), read with
    /// the config so `/v1/models` can show a real `created` without a query of its own.
    pub written_at: SortedMap<String, u64>,
    /// Trace export with its headers opened (`config::otel`); `None`: off, or left out.
    pub otel: Option<super::otel::OtelExport>,
    /// What each alias resolves to, computed when the config is loaded (else on first use). A
    /// price alias's resolution depends on the config and the cached shares measured at that
    /// moment, so a cached config resolves each alias once, not once per request.
    pub(crate) resolved: OnceCell<Resolution>,
    /// Catalog ids by their undated base (`routing::versions`, loose version matching), built
    /// the first time a requested name misses, then kept with the config.
    pub(crate) versions: OnceCell<SortedMap<String, Vec<ModelId>>>,
}

/// A config's alias resolutions, and the cached shares (by model id) the price order read:
/// only models with a cached price and a measured share are listed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolution {
    pub aliases: SortedMap<AliasName, Option<ModelId>>,
    pub cached_shares: SortedMap<ModelId, f64>,
}

impl TenantConfig {
    /// What the conditions of the tenant's rules and restrictions read of a request: the facts
    /// the request path computes.
    pub fn reads(&self) -> super::condition::Reads {
        self.rules.reads().with(self.settings.restriction_reads())
    }

    /// A tenant with nothing configured yet.
    pub fn empty(tenant: TenantId, settings: Settings) -> Self {
        Self {
            tenant,
            providers: SortedMap::new(),
            models: SortedMap::new(),
            aliases: SortedMap::new(),
            rules: RuleSet::new(),
            settings,
            written_at: SortedMap::new(),
            otel: None,
            resolved: OnceCell::new(),
            versions: OnceCell::new(),
        }
    }

    /// The same config with its alias resolutions not yet computed (benchmarks of a cold config).
    pub fn clone_unresolved(&self) -> Self {
        Self {
            resolved: OnceCell::new(),
            versions: OnceCell::new(),
            ..self.clone()
        }
    }
}
