//! Everything one tenant has configured, as the request path reads it.

use super::{Alias, AliasName, CatalogModel, Chain, ModelId, Provider, ProviderName, RouteName};
use super::{Settings, TenantId};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct TenantConfig {
    pub tenant: TenantId,
    pub providers: BTreeMap<ProviderName, Provider>,
    pub models: BTreeMap<ModelId, CatalogModel>,
    pub aliases: BTreeMap<AliasName, Alias>,
    pub rules: BTreeMap<RouteName, Chain>,
    pub settings: Settings,
}
