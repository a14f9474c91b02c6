//! An in-memory `AdminStore` for host tests (routing state: `memory_routing`): the same atomic steps and the
//! same refusals as the D1 adapter, so every admin rule can be proved without workerd.

pub use super::memory_routing::MemoryRouting;
use super::store::{
    AlertSecretWrite, AliasWrite, CatalogSnapshot, CatalogStore, Created, DepthWrite, EventRow,
    KeyRow, ModelWrite, NewKey, PolicyPatch, ProviderDelete, Stored, TenantRecord, TenantRow,
    TenantStore,
};
use crate::config::rule::MAX_RULES;
use crate::config::SortedMap;
use crate::config::{
    Alias, AliasName, CatalogModel, ModelId, ProviderName, RouteName, Rule, RuleSet,
    SettingsOverrides, StoredProvider, TenantId,
};
use std::cell::RefCell;

#[derive(Debug, Clone, Default)]
pub struct TenantData {
    pub record: Option<TenantRecord>,
    pub keys: SortedMap<String, NewKey>,
    pub providers: SortedMap<ProviderName, StoredProvider>,
    pub models: SortedMap<ModelId, CatalogModel>,
    pub aliases: SortedMap<AliasName, Alias>,
    pub rules: RuleSet,
    pub events: Vec<(u64, EventRow)>,
    /// Flushed usage roll-ups (`memory_usage`).
    pub rollups: Vec<(crate::usage::RollupKey, crate::usage::UsageSums)>,
    /// The sealed webhook signing secret.
    pub alert_secret: Option<String>,
}

/// Another admin's write, landing at the start of this store's next write: what a concurrent
/// request does between a command's reads and its write.
type Interleaved = Box<dyn FnOnce(&mut TenantData)>;

#[derive(Default)]
pub struct MemoryStore {
    tenants: RefCell<SortedMap<TenantId, TenantData>>,
    interleaved: RefCell<Option<Interleaved>>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("tenants", &self.tenants)
            .finish_non_exhaustive()
    }
}

/// The depth a tenant's rules must fit: its override, else the deployment's.
fn depth_of(d: &TenantData, default_depth: u32) -> u32 {
    d.record
        .as_ref()
        .and_then(|r| r.settings.max_fallback_depth)
        .unwrap_or(default_depth)
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// What the store holds for `t` (tests inspect it directly).
    pub fn data(&self, t: &TenantId) -> Option<TenantData> {
        self.tenants.borrow().get(t).cloned()
    }

    /// Adds a breaker event, as the routing objects do through the worker.
    pub fn add_event(&self, t: &TenantId, at: u64, body: &str) {
        if let Some(d) = self.tenants.borrow_mut().get_mut(t) {
            let seq = d.events.len() as u64 + 1;
            let row = EventRow {
                seq,
                body: body.to_owned(),
            };
            d.events.push((at, row));
        }
    }

    /// Runs `f` on the tenant's data just before the next write lands, as a concurrent admin
    /// request would, to prove what a write does with what changed since its command read.
    pub fn before_next_write(&self, f: impl FnOnce(&mut TenantData) + 'static) {
        *self.interleaved.borrow_mut() = Some(Box::new(f));
    }

    pub(super) fn with_data(&self, t: &TenantId, f: impl FnOnce(&mut TenantData)) {
        if let Some(d) = self.tenants.borrow_mut().get_mut(t) {
            f(d);
        }
    }

    fn read<T>(&self, t: &TenantId, f: impl FnOnce(&TenantData) -> T) -> Stored<T>
    where
        T: Default,
    {
        Ok(self.tenants.borrow().get(t).map(f).unwrap_or_default())
    }

    fn write<T: Default>(&self, t: &TenantId, f: impl FnOnce(&mut TenantData) -> T) -> Stored<T> {
        Ok(self.write_or(t, T::default(), f))
    }

    /// One atomic write to the tenant's data (`absent` when there is no such tenant), after any
    /// write interleaved before it.
    fn write_or<T>(&self, t: &TenantId, absent: T, f: impl FnOnce(&mut TenantData) -> T) -> T {
        let interleaved = self.interleaved.borrow_mut().take();
        let mut tenants = self.tenants.borrow_mut();
        let Some(d) = tenants.get_mut(t) else {
            return absent;
        };
        if let Some(other) = interleaved {
            other(d);
        }
        f(d)
    }
}

fn key_row(k: &NewKey) -> KeyRow {
    KeyRow {
        id: k.id.clone(),
        created_at: k.created_at,
        policy: k.policy.clone(),
    }
}

impl TenantStore for MemoryStore {
    async fn tenant_exists(&self, t: &TenantId) -> Stored<bool> {
        Ok(self.tenants.borrow().contains_key(t))
    }

    async fn create_tenant(
        &self,
        row: &TenantRow,
        aliases: &[(AliasName, Alias)],
    ) -> Stored<Created> {
        let mut tenants = self.tenants.borrow_mut();
        if tenants.contains_key(&row.id) {
            return Ok(Created::AlreadyExists);
        }
        let data = TenantData {
            record: Some(TenantRecord {
                row: row.clone(),
                settings: SettingsOverrides::default(),
            }),
            aliases: aliases.iter().cloned().collect(),
            ..TenantData::default()
        };
        tenants.insert(row.id.clone(), data);
        Ok(Created::Created)
    }

    async fn list_tenants(&self) -> Stored<Vec<TenantRow>> {
        let tenants = self.tenants.borrow();
        Ok(tenants
            .values()
            .filter_map(|d| d.record.as_ref().map(|r| r.row.clone()))
            .collect())
    }

    async fn tenant(&self, t: &TenantId) -> Stored<Option<TenantRecord>> {
        self.read(t, |d| d.record.clone())
    }

    async fn delete_tenant(&self, t: &TenantId) -> Stored<()> {
        self.tenants.borrow_mut().remove(t);
        Ok(())
    }

    async fn put_settings(
        &self,
        t: &TenantId,
        settings: &SettingsOverrides,
        max_depth: u32,
        secret: AlertSecretWrite<'_>,
    ) -> Stored<DepthWrite> {
        Ok(self.write_or(t, DepthWrite::DepthExceeded, |d| {
            if d.rules.values().any(|c| c.len() > max_depth as usize) {
                return DepthWrite::DepthExceeded;
            }
            match d.record.as_mut() {
                Some(r) => {
                    r.settings = settings.clone();
                    match secret {
                        AlertSecretWrite::Keep => {}
                        AlertSecretWrite::Set(sealed) => d.alert_secret = Some(sealed.to_owned()),
                        AlertSecretWrite::Clear => d.alert_secret = None,
                    }
                    DepthWrite::Written
                }
                None => DepthWrite::DepthExceeded,
            }
        }))
    }

    async fn insert_key(&self, t: &TenantId, key: &NewKey) -> Stored<()> {
        self.write(t, |d| {
            d.keys.insert(key.id.clone(), key.clone());
        })
    }

    async fn list_keys(&self, t: &TenantId) -> Stored<Vec<KeyRow>> {
        self.read(t, |d| {
            let mut rows: Vec<KeyRow> = d.keys.values().map(key_row).collect();
            rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            rows
        })
    }

    async fn merge_key_policy(
        &self,
        t: &TenantId,
        id: &str,
        patch: &PolicyPatch,
    ) -> Stored<Option<KeyRow>> {
        self.write_or(t, Ok(None), |d| match d.keys.get_mut(id) {
            Some(k) => {
                k.policy = patch.apply(&k.policy)?;
                Ok(Some(key_row(k)))
            }
            None => Ok(None),
        })
    }

    async fn delete_key(&self, t: &TenantId, id: &str) -> Stored<bool> {
        self.write(t, |d| d.keys.remove(id).is_some())
    }

    async fn events(&self, t: &TenantId, since: u64, limit: u32) -> Stored<Vec<EventRow>> {
        self.read(t, |d| {
            d.events
                .iter()
                .filter(|(at, _)| *at >= since)
                .take(limit as usize)
                .map(|(_, row)| row.clone())
                .collect()
        })
    }
}

impl CatalogStore for MemoryStore {
    async fn provider_names(&self, t: &TenantId) -> Stored<Vec<ProviderName>> {
        self.read(t, |d| d.providers.keys().cloned().collect())
    }

    async fn list_providers(&self, t: &TenantId) -> Stored<Vec<StoredProvider>> {
        self.read(t, |d| d.providers.values().cloned().collect())
    }

    async fn provider(&self, t: &TenantId, p: &ProviderName) -> Stored<Option<StoredProvider>> {
        self.read(t, |d| d.providers.get(p).cloned())
    }

    async fn put_provider(&self, t: &TenantId, p: &StoredProvider, _now: u64) -> Stored<()> {
        self.write(t, |d| {
            d.providers.insert(p.name.clone(), p.clone());
        })
    }

    async fn delete_provider(&self, t: &TenantId, p: &ProviderName) -> Stored<ProviderDelete> {
        let mut tenants = self.tenants.borrow_mut();
        let Some(d) = tenants.get_mut(t) else {
            return Ok(ProviderDelete::NotFound);
        };
        let users: Vec<ModelId> = d
            .models
            .values()
            .filter(|m| &m.provider == p)
            .map(|m| m.id.clone())
            .collect();
        if !users.is_empty() {
            return Ok(ProviderDelete::InUse(users));
        }
        Ok(match d.providers.remove(p) {
            Some(_) => ProviderDelete::Deleted,
            None => ProviderDelete::NotFound,
        })
    }

    async fn list_models(&self, t: &TenantId) -> Stored<Vec<CatalogModel>> {
        self.read(t, |d| d.models.values().cloned().collect())
    }

    async fn model(&self, t: &TenantId, id: &ModelId) -> Stored<Option<CatalogModel>> {
        self.read(t, |d| d.models.get(id).cloned())
    }

    async fn put_model(&self, t: &TenantId, m: &CatalogModel, _now: u64) -> Stored<ModelWrite> {
        let mut tenants = self.tenants.borrow_mut();
        let Some(d) = tenants.get_mut(t) else {
            return Ok(ModelWrite::NoSuchProvider);
        };
        if !d.providers.contains_key(&m.provider) {
            return Ok(ModelWrite::NoSuchProvider);
        }
        if d.aliases.keys().any(|a| a.as_str() == m.id.as_str()) {
            return Ok(ModelWrite::IsAnAlias);
        }
        d.models.insert(m.id.clone(), m.clone());
        Ok(ModelWrite::Written)
    }

    async fn delete_model(&self, t: &TenantId, id: &ModelId) -> Stored<bool> {
        self.write(t, |d| d.models.remove(id).is_some())
    }

    async fn list_aliases(&self, t: &TenantId) -> Stored<Vec<(AliasName, Alias)>> {
        self.read(t, |d| {
            d.aliases
                .iter()
                .map(|(n, a)| (n.clone(), a.clone()))
                .collect()
        })
    }

    async fn alias(&self, t: &TenantId, name: &AliasName) -> Stored<Option<Alias>> {
        self.read(t, |d| d.aliases.get(name).cloned())
    }

    async fn put_alias(
        &self,
        t: &TenantId,
        name: &AliasName,
        a: &Alias,
        _now: u64,
    ) -> Stored<AliasWrite> {
        let mut tenants = self.tenants.borrow_mut();
        let Some(d) = tenants.get_mut(t) else {
            return Ok(AliasWrite::Written);
        };
        if d.models.keys().any(|m| m.as_str() == name.as_str()) {
            return Ok(AliasWrite::IsAModel);
        }
        d.aliases.insert(name.clone(), a.clone());
        Ok(AliasWrite::Written)
    }

    async fn delete_alias(&self, t: &TenantId, name: &AliasName) -> Stored<bool> {
        self.write(t, |d| d.aliases.remove(name).is_some())
    }

    async fn list_rules(&self, t: &TenantId) -> Stored<Vec<Rule>> {
        self.read(t, |d| d.rules.iter().cloned().collect())
    }

    async fn put_rule(
        &self,
        t: &TenantId,
        rule: &Rule,
        default_depth: u32,
        _now: u64,
    ) -> Stored<DepthWrite> {
        Ok(self.write_or(t, DepthWrite::DepthExceeded, |d| {
            if rule.chain.len() > depth_of(d, default_depth) as usize {
                return DepthWrite::DepthExceeded;
            }
            let others = d.rules.iter().filter(|r| r.name != rule.name).count();
            if others >= MAX_RULES {
                return DepthWrite::TooManyRules;
            }
            d.rules.add(rule.clone());
            DepthWrite::Written
        }))
    }

    async fn delete_rule(&self, t: &TenantId, name: &RouteName) -> Stored<bool> {
        self.write(t, |d| d.rules.remove(name.as_str()))
    }

    async fn catalog(&self, t: &TenantId) -> Stored<CatalogSnapshot> {
        self.read(t, |d| CatalogSnapshot {
            provider_names: d.providers.keys().cloned().collect(),
            models: d.models.values().cloned().collect(),
            aliases: d
                .aliases
                .iter()
                .map(|(n, a)| (n.clone(), a.clone()))
                .collect(),
        })
    }
}
