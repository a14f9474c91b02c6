//! D1 reads for the request path, behind a per-isolate cache (`crate::cache`): a warm request
//! makes no D1 query, an entry in steady use is reloaded in the background (waitUntil) from half
//! its TTL on, and no entry older than `CONFIG_TTL_MS` answers, so a caller key revoked or a
//! tenant deleted through another isolate stops working here within the TTL.

use super::metrics::Metrics;
use crate::api::ApiError;
use crate::cache::{CachePolicy, Lookup, Ticket, TtlCache};
use crate::config::sealed::Kek;
use crate::config::{
    Alias, AliasName, CallerKey, CatalogModel, Chain, Defaults, RouteName, SettingsOverrides,
    StoredProvider, TenantConfig, TenantId,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use worker::wasm_bindgen::JsValue;
use worker::{console_error, Context, D1Database, D1Result, Env};

/// Caller keys and tenant configs held per isolate at most; past it the oldest is dropped.
const MAX_CACHED: usize = 10_000;

fn policy(defaults: &Defaults, negative: bool) -> CachePolicy {
    CachePolicy {
        ttl_ms: defaults.config_ttl_ms,
        // A minted key is random, so no isolate can have looked it up before it existed: an
        // unknown key may be remembered as long as a known one.
        negative_ttl_ms: if negative { defaults.config_ttl_ms } else { 0 },
        max_entries: MAX_CACHED,
        max_absent: MAX_CACHED,
    }
}

const UNSET: CachePolicy = CachePolicy {
    ttl_ms: 0,
    negative_ttl_ms: 0,
    max_entries: MAX_CACHED,
    max_absent: MAX_CACHED,
};

thread_local! {
    static CONFIGS: RefCell<TtlCache<TenantId, Rc<TenantConfig>>> = RefCell::new(TtlCache::new(UNSET));
    static CALLERS: RefCell<TtlCache<String, CallerKey>> = RefCell::new(TtlCache::new(UNSET));
}

/// Drops this isolate's cached config for `tenant` after an admin write, its caller keys, every
/// remembered unknown key, and voids every read still in flight.
pub fn invalidate_tenant(tenant: &TenantId) {
    CONFIGS.with(|c| c.borrow_mut().invalidate(|t, _| t == tenant));
    CALLERS.with(|c| c.borrow_mut().invalidate(|_, k| &k.tenant == tenant));
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

/// The caller key that hashes to `key_hash`, if any.
pub async fn caller_key(
    env: &Env,
    ctx: &Context,
    key_hash: &str,
    defaults: &Defaults,
    metrics: &Metrics,
) -> Result<Option<CallerKey>, ApiError> {
    let now = super::http::now_ms();
    let key = key_hash.to_owned();
    let lookup = CALLERS.with(|c| {
        let mut c = c.borrow_mut();
        c.set_policy(policy(defaults, true));
        c.lookup(&key, now)
    });
    match lookup {
        Lookup::Hit(t) => Ok(Some(t)),
        Lookup::Absent => Ok(None),
        Lookup::HitRefresh(t, ticket) => {
            let env = env.clone();
            ctx.wait_until(async move {
                match query_caller(&env, &key).await {
                    Ok(found) => CALLERS.with(|c| c.borrow_mut().store(key, found, ticket)),
                    Err(_) => {
                        CALLERS.with(|c| c.borrow_mut().refresh_failed(&key));
                        false
                    }
                };
            });
            Ok(Some(t))
        }
        Lookup::Miss(ticket) => {
            metrics.d1_query();
            let found = query_caller(env, &key).await?;
            CALLERS.with(|c| c.borrow_mut().store(key, found.clone(), ticket));
            Ok(found)
        }
    }
}

async fn query_caller(env: &Env, key_hash: &str) -> Result<Option<CallerKey>, ApiError> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        tenant_id: TenantId,
    }
    let stmt = db(env)?
        .prepare("SELECT id, tenant_id FROM caller_keys WHERE key_hash = ?1")
        .bind(&[js(key_hash)])
        .map_err(|e| storage_error("bind", e))?;
    let r = stmt
        .all()
        .await
        .map_err(|e| storage_error("caller lookup", e))?;
    Ok(rows::<Row>(&r)?.into_iter().next().map(|r| CallerKey {
        tenant: r.tenant_id,
        id: r.id,
    }))
}

/// A config ready for the request path: aliases resolved at load, off the request path when
/// the load is a background refresh.
async fn load_resolved(
    env: &Env,
    tenant: &TenantId,
    defaults: &Defaults,
) -> Result<Option<Rc<TenantConfig>>, ApiError> {
    let found = load_config(env, tenant, defaults).await?;
    if let Some(cfg) = &found {
        crate::routing::resolve::resolve_aliases(cfg);
    }
    Ok(found.map(Rc::new))
}

fn store_config(tenant: TenantId, found: Option<Rc<TenantConfig>>, ticket: Ticket) {
    CONFIGS.with(|c| c.borrow_mut().store(tenant, found, ticket));
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
    let lookup = CONFIGS.with(|c| {
        let mut c = c.borrow_mut();
        c.set_policy(policy(defaults, false));
        c.lookup(tenant, now)
    });
    match lookup {
        Lookup::Hit(cfg) => Ok(Some(cfg)),
        Lookup::Absent => Ok(None),
        Lookup::HitRefresh(cfg, ticket) => {
            let (env, tenant, defaults) = (env.clone(), tenant.clone(), *defaults);
            ctx.wait_until(async move {
                match load_resolved(&env, &tenant, &defaults).await {
                    Ok(found) => store_config(tenant, found, ticket),
                    Err(_) => CONFIGS.with(|c| c.borrow_mut().refresh_failed(&tenant)),
                }
            });
            Ok(Some(cfg))
        }
        Lookup::Miss(ticket) => {
            metrics.d1_query();
            let found = load_resolved(env, tenant, defaults).await?;
            store_config(tenant.clone(), found.clone(), ticket);
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
    struct Model {
        spec: String,
        updated_at: f64,
    }
    #[derive(Deserialize)]
    struct Named {
        name: String,
        spec: String,
        updated_at: f64,
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
            bind("SELECT spec, updated_at FROM models WHERE tenant_id = ?1")?,
            bind("SELECT name, spec, updated_at FROM aliases WHERE tenant_id = ?1")?,
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
    let mut written_at = BTreeMap::new();
    let mut models = BTreeMap::new();
    for row in rows::<Model>(m_rows)? {
        let m = parse_stored::<CatalogModel>(&row.spec)?;
        written_at.insert(m.id.to_string(), (row.updated_at / 1000.0) as u64);
        models.insert(m.id.clone(), m);
    }
    let mut aliases = BTreeMap::new();
    for row in rows::<Named>(a_rows)? {
        let name = AliasName::parse(&row.name).map_err(|e| storage_error("alias name", e))?;
        written_at.insert(name.to_string(), (row.updated_at / 1000.0) as u64);
        aliases.insert(name, parse_stored::<Alias>(&row.spec)?);
    }
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
        written_at,
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
