//! The admin core's storage port: what the admin commands need from storage, in config types.
//! Each method is one atomic step; where a rule must hold at the moment of the write (a model's
//! provider exists, an alias is not a model id), the store checks it inside that step and says
//! which rule refused.

pub use super::policy_patch::PolicyPatch;
use crate::config::KeyPolicy;
use crate::config::SortedMap;
use crate::config::{
    Alias, AliasName, CatalogModel, ModelId, ProviderName, RouteName, Rule, SettingsOverrides,
    StoredProvider, TenantId,
};
use crate::governance::usage_query::UsageQuery;
use crate::routing::stats::stats_book::StatsSnapshot;
use crate::usage::spend::Spend;
use crate::usage::UsageSums;
use serde::Serialize;

/// A storage fault. The cause goes to the log line; the caller sees a 500 without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    op: &'static str,
    cause: String,
}

impl StoreError {
    pub fn new(op: &'static str, cause: impl std::fmt::Display) -> Self {
        Self {
            op,
            cause: cause.to_string(),
        }
    }

    pub fn op(&self) -> &'static str {
        self.op
    }

    pub fn cause(&self) -> &str {
        &self.cause
    }
}

pub type Stored<T> = Result<T, StoreError>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TenantRow {
    pub id: TenantId,
    pub name: String,
    pub created_at: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TenantRecord {
    pub row: TenantRow,
    pub settings: SettingsOverrides,
}

/// A caller key as listed: never the key, never its hash.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyRow {
    pub id: String,
    pub created_at: u64,
    #[serde(flatten)]
    pub policy: KeyPolicy,
}

/// A caller key to store: only its hash, never the key.
#[derive(Debug, Clone, PartialEq)]
pub struct NewKey {
    pub id: String,
    pub key_hash: String,
    pub created_at: u64,
    pub policy: KeyPolicy,
}

/// What a tenant's catalog holds, without opening a single provider key: enough to judge a
/// routing rule's entries.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CatalogSnapshot {
    pub provider_names: Vec<ProviderName>,
    pub models: Vec<CatalogModel>,
    pub aliases: Vec<(AliasName, Alias)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    Created,
    AlreadyExists,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelWrite {
    Written,
    NoSuchProvider,
    /// The id is an alias name: one namespace for both.
    IsAnAlias,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AliasWrite {
    Written,
    /// The name is a catalog model id.
    IsAModel,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderDelete {
    Deleted,
    NotFound,
    /// Models still name the provider; nothing was deleted.
    InUse(Vec<ModelId>),
}

/// A write that must keep every chain within `max_fallback_depth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepthWrite {
    Written,
    /// A chain would be longer than the depth (or the tenant is gone); nothing was written.
    DepthExceeded,
    /// A new rule's name while the tenant has `MAX_RULES` already (rule writes only).
    TooManyRules,
}

impl DepthWrite {
    /// A guarded write's outcome from whether it wrote (its guard holds or nothing is written).
    pub fn from_written(written: bool) -> Self {
        if written {
            Self::Written
        } else {
            Self::DepthExceeded
        }
    }
}

/// What a settings write does to the webhook signing secret: written in the same statement as
/// the settings, so a reader never sees a new URL with the old secret (or none) in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertSecretWrite<'a> {
    /// The URL is the one stored: its secret stays.
    Keep,
    /// A new URL: its new secret, sealed.
    Set(&'a str),
    /// No `alerts`: the secret is forgotten.
    Clear,
}

/// One stored breaker event: its order and its JSON body as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    pub seq: u64,
    pub body: String,
}

/// Storage for the admin commands: tenants and their keys, settings and events, plus the
/// catalog. `async fn` in a trait without `Send`: the worker runs one request per task on one
/// thread, and the host tests block on each call.
pub trait AdminStore: TenantStore + CatalogStore + UsageStore {}

impl<T: TenantStore + CatalogStore + UsageStore> AdminStore for T {}

#[allow(async_fn_in_trait)]
pub trait TenantStore {
    async fn tenant_exists(&self, t: &TenantId) -> Stored<bool>;
    /// The tenant and its starting aliases, all or nothing.
    async fn create_tenant(
        &self,
        row: &TenantRow,
        aliases: &[(AliasName, Alias)],
    ) -> Stored<Created>;
    async fn list_tenants(&self) -> Stored<Vec<TenantRow>>;
    async fn tenant(&self, t: &TenantId) -> Stored<Option<TenantRecord>>;
    /// Everything the tenant owns goes with it, in one step.
    async fn delete_tenant(&self, t: &TenantId) -> Stored<()>;
    /// Writes the settings, and the webhook signing secret as `secret` says, only if no routing
    /// rule's chain is longer than `max_depth` (the depth they allow) at that moment, in one
    /// step, so a rule written meanwhile cannot outgrow it and the URL and its secret change
    /// together.
    async fn put_settings(
        &self,
        t: &TenantId,
        settings: &SettingsOverrides,
        max_depth: u32,
        secret: AlertSecretWrite<'_>,
    ) -> Stored<DepthWrite>;

    async fn insert_key(&self, t: &TenantId, key: &NewKey) -> Stored<()>;
    async fn list_keys(&self, t: &TenantId) -> Stored<Vec<KeyRow>>;
    /// Merges `patch` into the policy stored at this moment, field by field, in one step: two
    /// PATCHes that race both land, as if applied one after the other. The key as it now is;
    /// None when it does not exist.
    async fn merge_key_policy(
        &self,
        t: &TenantId,
        id: &str,
        patch: &PolicyPatch,
    ) -> Stored<Option<KeyRow>>;
    async fn delete_key(&self, t: &TenantId, id: &str) -> Stored<bool>;
    /// At most `limit` events at or after `since`, oldest first.
    async fn events(&self, t: &TenantId, since: u64, limit: u32) -> Stored<Vec<EventRow>>;
}

/// A tenant's providers, models, aliases and routing rules.
#[allow(async_fn_in_trait)]
pub trait CatalogStore {
    async fn provider_names(&self, t: &TenantId) -> Stored<Vec<ProviderName>>;
    async fn list_providers(&self, t: &TenantId) -> Stored<Vec<StoredProvider>>;
    async fn provider(&self, t: &TenantId, p: &ProviderName) -> Stored<Option<StoredProvider>>;
    async fn put_provider(&self, t: &TenantId, p: &StoredProvider, now: u64) -> Stored<()>;
    /// Deletes only when no model names the provider.
    async fn delete_provider(&self, t: &TenantId, p: &ProviderName) -> Stored<ProviderDelete>;

    async fn list_models(&self, t: &TenantId) -> Stored<Vec<CatalogModel>>;
    async fn model(&self, t: &TenantId, id: &ModelId) -> Stored<Option<CatalogModel>>;
    async fn put_model(&self, t: &TenantId, m: &CatalogModel, now: u64) -> Stored<ModelWrite>;
    async fn delete_model(&self, t: &TenantId, id: &ModelId) -> Stored<bool>;

    async fn list_aliases(&self, t: &TenantId) -> Stored<Vec<(AliasName, Alias)>>;
    async fn alias(&self, t: &TenantId, name: &AliasName) -> Stored<Option<Alias>>;
    async fn put_alias(
        &self,
        t: &TenantId,
        name: &AliasName,
        a: &Alias,
        now: u64,
    ) -> Stored<AliasWrite>;
    async fn delete_alias(&self, t: &TenantId, name: &AliasName) -> Stored<bool>;

    /// Every rule, by match, then in the order a request tries them (priority, name).
    async fn list_rules(&self, t: &TenantId) -> Stored<Vec<Rule>>;
    /// Upserts the rule by name only if its chain fits the tenant's `max_fallback_depth` at that
    /// moment (its override, else `default_depth`) and, for a new name, the tenant has fewer
    /// than `MAX_RULES` rules, in one step, so settings lowered or rules added meanwhile hold.
    async fn put_rule(
        &self,
        t: &TenantId,
        rule: &Rule,
        default_depth: u32,
        now: u64,
    ) -> Stored<DepthWrite>;
    /// Deletes the rule called `name`.
    async fn delete_rule(&self, t: &TenantId, name: &RouteName) -> Stored<bool>;

    async fn catalog(&self, t: &TenantId) -> Stored<CatalogSnapshot>;
}

/// The usage roll-ups the ledger has flushed.
#[allow(async_fn_in_trait)]
pub trait UsageStore {
    /// Sums per group over the minutes overlapping the query's range, in group order; an empty
    /// group (nothing served, no end user) is "".
    async fn usage(&self, t: &TenantId, q: &UsageQuery) -> Stored<Vec<(String, UsageSums)>>;
}

/// The tenant's ledger as the admin side sees it: the spend of its keys, and wiping it with the
/// tenant.
#[allow(async_fn_in_trait)]
pub trait LedgerControl {
    /// Each listed key's spend (a key never charged may be missing).
    async fn spend(&self, t: &TenantId, keys: &[String]) -> Stored<SortedMap<String, Spend>>;
    /// Best effort, after the tenant's rows are gone.
    async fn wipe_ledger(&self, t: &TenantId);
}

/// The routing state the admin side may touch: wiping a deleted provider's parks and breakers,
/// and closing breakers by hand.
#[allow(async_fn_in_trait)]
pub trait RoutingControl {
    /// Best effort, after the rows are gone: a failure is the adapter's to log, and the
    /// deletion still stands.
    async fn wipe(&self, t: &TenantId, provider: &ProviderName);
    /// Closes the provider's breakers (one model's, or all), returning the models closed.
    async fn reset(
        &self,
        t: &TenantId,
        provider: &ProviderName,
        model: Option<&ModelId>,
    ) -> Stored<Vec<ModelId>>;
    /// The live stats snapshot of each listed provider, by provider name.
    async fn stats(
        &self,
        t: &TenantId,
        providers: &[ProviderName],
    ) -> Stored<SortedMap<String, StatsSnapshot>>;
}
