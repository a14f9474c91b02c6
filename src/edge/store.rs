//! D1 reads for the request path, behind a per-isolate cache: a warm request makes no D1 query.
//! Entries older than `config_ttl` are served once more while a background refresh (waitUntil)
//! reloads them, so other isolates see admin writes within the TTL without a query on the hot path.

use super::metrics::Metrics;
use crate::api::ApiError;
use crate::config::sealed::Kek;
use crate::config::{
    Alias, AliasName, CatalogModel, Chain, Defaults, RouteName, SettingsOverrides, StoredProvider,
    TenantConfig, TenantId,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::rc::Rc;
use worker::wasm_bindgen::JsValue;
use worker::{console_error, Context, D1Database, D1Result, Env};

struct Entry<V> {
    value: V,
    loaded_at: u64,
    refreshing: bool,
}

/// What the cache knows about a key right now.
enum Lookup<V> {
    Fresh(V),
    /// Still usable; the caller should start a refresh.
    Stale(V),
    Missing,
}

struct SwrCache<K, V>(HashMap<K, Entry<V>>);

impl<K: Hash + Eq, V: Clone> SwrCache<K, V> {
    fn get(&mut self, key: &K, now: u64, ttl: u64) -> Lookup<V> {
        match self.0.get_mut(key) {
            None => Lookup::Missing,
            Some(e) if now.saturating_sub(e.loaded_at) < ttl || e.refreshing => {
                Lookup::Fresh(e.value.clone())
            }
            Some(e) => {
                e.refreshing = true;
                Lookup::Stale(e.value.clone())
            }
        }
    }

    fn put(&mut self, key: K, value: Option<V>, now: u64) {
        match value {
            Some(value) => {
                self.0.insert(
                    key,
                    Entry {
                        value,
                        loaded_at: now,
                        refreshing: false,
                    },
                );
            }
            None => {
                self.0.remove(&key);
            }
        }
    }
}

thread_local! {
    static CONFIGS: RefCell<SwrCache<TenantId, Rc<TenantConfig>>> = RefCell::new(SwrCache(HashMap::new()));
    static CALLERS: RefCell<SwrCache<String, TenantId>> = RefCell::new(SwrCache(HashMap::new()));
}

/// Drops this isolate's cached config for `tenant` after an admin write.
pub fn invalidate_tenant(tenant: &TenantId) {
    CONFIGS.with(|c| c.borrow_mut().0.remove(tenant));
    CALLERS.with(|c| c.borrow_mut().0.retain(|_, e| e.value != *tenant));
}

pub fn db(env: &Env) -> Result<D1Database, ApiError> {
    env.d1("DB").map_err(|e| storage_error("binding", e))
}

pub fn storage_error(what: &str, e: impl std::fmt::Display) -> ApiError {
    console_error!(
        "{}",
        serde_json::json!({"msg": "storage error", "op": what, "error": e.to_string()})
    );
    ApiError::internal()
}

pub fn js(s: &str) -> JsValue {
    JsValue::from_str(s)
}

pub fn rows<T: DeserializeOwned>(r: &D1Result) -> Result<Vec<T>, ApiError> {
    r.results::<T>().map_err(|e| storage_error("decode", e))
}

/// The tenant whose caller key hashes to `key_hash`, if any.
pub async fn caller_tenant(
    env: &Env,
    ctx: &Context,
    key_hash: &str,
    defaults: &Defaults,
    metrics: &Metrics,
) -> Result<Option<TenantId>, ApiError> {
    let now = super::http::now_ms();
    let key = key_hash.to_owned();
    match CALLERS.with(|c| c.borrow_mut().get(&key, now, defaults.config_ttl_ms)) {
        Lookup::Fresh(t) => Ok(Some(t)),
        Lookup::Stale(t) => {
            let env = env.clone();
            ctx.wait_until(async move {
                if let Ok(found) = query_caller(&env, &key).await {
                    CALLERS.with(|c| c.borrow_mut().put(key, found, super::http::now_ms()));
                }
            });
            Ok(Some(t))
        }
        Lookup::Missing => {
            metrics.d1_query();
            let found = query_caller(env, &key).await?;
            CALLERS.with(|c| c.borrow_mut().put(key, found.clone(), now));
            Ok(found)
        }
    }
}

async fn query_caller(env: &Env, key_hash: &str) -> Result<Option<TenantId>, ApiError> {
    #[derive(Deserialize)]
    struct Row {
        tenant_id: TenantId,
    }
    let stmt = db(env)?
        .prepare("SELECT tenant_id FROM caller_keys WHERE key_hash = ?1")
        .bind(&[js(key_hash)])
        .map_err(|e| storage_error("bind", e))?;
    let r = stmt
        .all()
        .await
        .map_err(|e| storage_error("caller lookup", e))?;
    Ok(rows::<Row>(&r)?.into_iter().next().map(|r| r.tenant_id))
}

/// The tenant's whole config, from the isolate cache when it has it.
pub async fn tenant_config(
    env: &Env,
    ctx: &Context,
    tenant: &TenantId,
    defaults: &Defaults,
    metrics: &Metrics,
) -> Result<Option<Rc<TenantConfig>>, ApiError> {
    let now = super::http::now_ms();
    match CONFIGS.with(|c| c.borrow_mut().get(tenant, now, defaults.config_ttl_ms)) {
        Lookup::Fresh(cfg) => Ok(Some(cfg)),
        Lookup::Stale(cfg) => {
            let (env, tenant, defaults) = (env.clone(), tenant.clone(), *defaults);
            ctx.wait_until(async move {
                if let Ok(found) = load_config(&env, &tenant, &defaults).await {
                    // Resolved here, off the request path, not by the next request.
                    if let Some(cfg) = &found {
                        crate::routing::resolve::resolve_aliases(cfg);
                    }
                    let found = found.map(Rc::new);
                    CONFIGS.with(|c| c.borrow_mut().put(tenant, found, super::http::now_ms()));
                }
            });
            Ok(Some(cfg))
        }
        Lookup::Missing => {
            metrics.d1_query();
            let found = load_config(env, tenant, defaults).await?.map(Rc::new);
            CONFIGS.with(|c| c.borrow_mut().put(tenant.clone(), found.clone(), now));
            Ok(found)
        }
    }
}

/// One D1 round trip: a batch of five reads.
pub async fn load_config(
    env: &Env,
    tenant: &TenantId,
    defaults: &Defaults,
) -> Result<Option<TenantConfig>, ApiError> {
    #[derive(Deserialize)]
    struct TenantRow {
        settings: String,
    }
    #[derive(Deserialize)]
    struct Spec {
        spec: String,
    }
    #[derive(Deserialize)]
    struct Named {
        name: String,
        spec: String,
    }
    #[derive(Deserialize)]
    struct RuleRow {
        match_name: RouteName,
        chain: String,
    }
    let db = db(env)?;
    let t = [js(tenant.as_str())];
    let bind = |sql: &str| {
        db.prepare(sql)
            .bind(&t)
            .map_err(|e| storage_error("bind", e))
    };
    let results = db
        .batch(vec![
            bind("SELECT settings FROM tenants WHERE id = ?1")?,
            bind("SELECT spec FROM providers WHERE tenant_id = ?1")?,
            bind("SELECT spec FROM models WHERE tenant_id = ?1")?,
            bind("SELECT name, spec FROM aliases WHERE tenant_id = ?1")?,
            bind("SELECT match_name, chain FROM routing_rules WHERE tenant_id = ?1")?,
        ])
        .await
        .map_err(|e| storage_error("load config", e))?;
    let [t_rows, p_rows, m_rows, a_rows, r_rows] = results.as_slice() else {
        return Err(storage_error(
            "load config",
            "batch returned the wrong number of results",
        ));
    };
    let Some(tenant_row) = rows::<TenantRow>(t_rows)?.into_iter().next() else {
        return Ok(None);
    };
    let overrides: SettingsOverrides = parse_stored(&tenant_row.settings)?;
    let kek = kek(env)?;
    let allow_http = super::deployment::deployment(env)?.allow_http_upstreams;
    let mut providers = BTreeMap::new();
    for row in rows::<Spec>(p_rows)? {
        let stored: StoredProvider = parse_stored(&row.spec)?;
        // Stored before the https rule, or while the deployment allowed http: never called now.
        if let Err(why) = stored.base_url.check_transport(allow_http) {
            console_error!(
                "{}",
                serde_json::json!({"msg": "provider left out of routing", "tenant": tenant, "provider": stored.name, "reason": why.to_string()})
            );
            continue;
        }
        let (provider, problems) = stored.open(tenant, kek.as_ref(), |name| {
            env.secret(name).ok().map(|s| s.to_string())
        });
        if !problems.is_empty() {
            console_error!(
                "{}",
                serde_json::json!({"msg": "provider keys unusable", "tenant": tenant, "provider": provider.name, "problems": problems})
            );
        }
        // A provider with no usable key cannot serve: its models drop out of chains.
        if !provider.keys.is_empty() {
            providers.insert(provider.name.clone(), provider);
        }
    }
    let models: BTreeMap<_, _> = rows::<Spec>(m_rows)?
        .iter()
        .map(|r| parse_stored::<CatalogModel>(&r.spec).map(|m| (m.id.clone(), m)))
        .collect::<Result<_, _>>()?;
    let aliases: BTreeMap<_, _> = rows::<Named>(a_rows)?
        .iter()
        .map(|r| {
            let name = AliasName::parse(&r.name).map_err(|e| storage_error("alias name", e))?;
            parse_stored::<Alias>(&r.spec).map(|a| (name, a))
        })
        .collect::<Result<_, _>>()?;
    let rules: BTreeMap<_, _> = rows::<RuleRow>(r_rows)?
        .into_iter()
        .map(|r| parse_stored::<Chain>(&r.chain).map(|c| (r.match_name, c)))
        .collect::<Result<_, _>>()?;
    Ok(Some(TenantConfig {
        tenant: tenant.clone(),
        providers,
        models,
        aliases,
        rules,
        settings: defaults.effective(&overrides),
        resolved: Default::default(),
    }))
}

/// The key-encryption key, if the deployment has one (`wrangler secret put CG_KEK`).
pub fn kek(env: &Env) -> Result<Option<Kek>, ApiError> {
    match env.secret("CG_KEK") {
        Err(_) => Ok(None),
        Ok(s) => Kek::from_hex(&s.to_string())
            .map(Some)
            .map_err(|e| storage_error("CG_KEK", e)),
    }
}

pub fn parse_stored<T: DeserializeOwned>(json: &str) -> Result<T, ApiError> {
    serde_json::from_str(json).map_err(|e| storage_error("stored spec", e))
}

/// Stores a breaker transition as an event record (off the request path, in waitUntil).
pub async fn insert_event(env: &Env, tenant: &str, kind: &str, at: u64, body: &str) {
    let stmt = match db(env).and_then(|db| {
        db.prepare("INSERT INTO events (tenant_id, kind, at, body) VALUES (?1, ?2, ?3, ?4)")
            .bind(&[js(tenant), js(kind), JsValue::from_f64(at as f64), js(body)])
            .map_err(|e| storage_error("bind", e))
    }) {
        Ok(stmt) => stmt,
        Err(_) => return,
    };
    if let Err(e) = stmt.run().await {
        storage_error("insert event", e);
    }
}
