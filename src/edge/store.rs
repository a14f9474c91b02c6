//! D1 reads for the request path, behind the per-isolate memo (`crate::callers::Memo`): a warm
//! request makes no D1 query, an entry in steady use is reloaded in the background (waitUntil)
//! from half its TTL on, and no entry older than `CONFIG_TTL_MS` answers, so a caller key revoked
//! or a tenant deleted through another isolate stops working here within the TTL.

use super::d1::{logged, storage_error, Db};
use super::events::{fault, Fault};
use super::isolate::isolate;
use super::metrics::Metrics;
use crate::api::ApiError;
use crate::callers::{Lookup, MemoPolicy, Ticket};
use crate::config::caller_key::CallerKeyMac;
use crate::config::config_rows::{LeftOut, Opening};
use crate::config::sealed::Kek;
use crate::config::{CallerKey, Defaults, TenantConfig, TenantId};
use std::rc::Rc;
use worker::{Context, Env};

/// Caller keys and tenant configs held per isolate at most; past it the oldest is dropped.
const MAX_CACHED: usize = 10_000;

fn policy(defaults: &Defaults, negative: bool) -> MemoPolicy {
    MemoPolicy {
        ttl_ms: defaults.config_ttl_ms,
        // A minted key is random, so no isolate can have looked it up before it existed: an
        // unknown key may be remembered as long as a known one.
        negative_ttl_ms: if negative { defaults.config_ttl_ms } else { 0 },
        max_entries: MAX_CACHED,
        max_absent: MAX_CACHED,
    }
}

/// The memo's policy until the deployment vars are read.
pub const UNSET: MemoPolicy = MemoPolicy {
    ttl_ms: 0,
    negative_ttl_ms: 0,
    max_entries: MAX_CACHED,
    max_absent: MAX_CACHED,
};

/// Drops this isolate's cached config for `tenant` after an admin write, its caller keys, every
/// remembered unknown key, and voids every read still in flight.
pub fn invalidate_tenant(tenant: &TenantId) {
    isolate(|i| i.configs.borrow_mut().invalidate(|t, _| t == tenant));
    isolate(|i| {
        i.callers
            .borrow_mut()
            .invalidate(|_, k| &k.tenant == tenant)
    });
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
    let lookup = isolate(|i| {
        let mut c = i.callers.borrow_mut();
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
                    Ok(found) => isolate(|i| i.callers.borrow_mut().store(key, found, ticket)),
                    Err(_) => {
                        isolate(|i| i.callers.borrow_mut().refresh_failed(&key));
                        false
                    }
                };
            });
            Ok(Some(t))
        }
        Lookup::Miss(ticket) => {
            metrics.d1_query();
            let found = query_caller(env, &key).await?;
            isolate(|i| i.callers.borrow_mut().store(key, found.clone(), ticket));
            Ok(found)
        }
    }
}

async fn query_caller(env: &Env, key_hash: &str) -> Result<Option<CallerKey>, ApiError> {
    let db = Db::open(env).map_err(logged)?;
    db.caller_key(key_hash).await.map_err(logged)
}

/// A config ready for the request path: aliases resolved at load, off the request path when
/// the load is a background refresh, at the cached shares this isolate's live stats hold now.
async fn load_resolved(
    env: &Env,
    tenant: &TenantId,
    defaults: &Defaults,
) -> Result<Option<Rc<TenantConfig>>, ApiError> {
    let found = load_config(env, tenant, defaults).await?;
    if let Some(cfg) = &found {
        let now_ms = super::http::now_ms();
        let view = super::live_stats::IsolateView { tenant, now_ms };
        crate::routing::resolve::resolve_aliases_with(cfg, &view);
    }
    Ok(found.map(Rc::new))
}

fn store_config(tenant: TenantId, found: Option<Rc<TenantConfig>>, ticket: Ticket) {
    isolate(|i| i.configs.borrow_mut().store(tenant, found, ticket));
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
    let lookup = isolate(|i| {
        let mut c = i.configs.borrow_mut();
        c.set_policy(policy(defaults, false));
        c.lookup(tenant, now)
    });
    match lookup {
        Lookup::Hit(cfg) => Ok(Some(cfg)),
        Lookup::Absent => Ok(None),
        Lookup::HitRefresh(cfg, ticket) => {
            let (env, tenant, defaults) = (env.clone(), tenant.clone(), defaults.clone());
            ctx.wait_until(async move {
                match load_resolved(&env, &tenant, &defaults).await {
                    Ok(found) => store_config(tenant, found, ticket),
                    Err(_) => isolate(|i| i.configs.borrow_mut().refresh_failed(&tenant)),
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

/// The tenant's config from D1, provider keys opened: the only place a key is decrypted.
pub async fn load_config(
    env: &Env,
    tenant: &TenantId,
    defaults: &Defaults,
) -> Result<Option<TenantConfig>, ApiError> {
    let db = Db::open(env).map_err(logged)?;
    let Some(stored) = db.config_rows(tenant).await.map_err(logged)? else {
        return Ok(None);
    };
    let kek = kek(env)?;
    let allow_http = super::deployment::deployment(env)?.allow_http_upstreams;
    let secret = |name: &str| env.secret(name).ok().map(|s| s.to_string());
    let opening = Opening {
        kek: kek.as_ref(),
        allow_http,
        secret: &secret,
    };
    let settings = with_health(
        defaults.effective(&stored.settings),
        stored.health_mode.as_deref(),
    );
    let (config, left_out) = stored.assemble(tenant, &opening, settings);
    for l in &left_out {
        fault(match l {
            LeftOut::Transport { provider, reason } => Fault::ProviderLeftOut {
                tenant: tenant.as_str(),
                provider: provider.as_str(),
                reason,
            },
            LeftOut::Keys { provider, problems } => Fault::ProviderKeysUnusable {
                tenant: tenant.as_str(),
                provider: provider.as_str(),
                problems,
            },
            LeftOut::Otel(what) => Fault::Otel {
                tenant: tenant.as_str(),
                spans: 0,
                what,
            },
        });
    }
    Ok(Some(config))
}

/// The tenant's degraded mode rides on its config: while degraded, exploration is
/// off. An unreadable state is healthy (logged): it only ever turns features off.
fn with_health(s: crate::config::Settings, mode: Option<&str>) -> crate::config::Settings {
    let mode = mode.and_then(|m| {
        serde_json::from_str::<crate::health::degraded::DegradedMode>(m)
            .map_err(|e| fault(Fault::HealthModeUnreadable { error: &e }))
            .ok()
    });
    s.with_degraded_since(mode.and_then(|m| m.since()))
}

/// This isolate's cached config of `tenant`, however old, without a query (a hint only).
pub fn cached_config(tenant: &TenantId) -> Option<Rc<TenantConfig>> {
    isolate(|i| i.configs.borrow().peek(tenant))
}

/// The MAC key of caller keys, derived from `CG_KEK` once per isolate (the secret cannot change
/// under it), its HMAC state keyed once; each request's copy shares it (a reference count).
/// None without a usable KEK: tokens are then looked up without a MAC check.
pub fn caller_key_mac(env: &Env) -> Option<CallerKeyMac> {
    isolate(|i| {
        i.caller_mac
            .get_or_init(|| {
                // A malformed CG_KEK is logged by `kek`; the request path goes on without a MAC
                // check.
                kek(env).ok().flatten().map(|k| k.caller_key_mac().clone())
            })
            .clone()
    })
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

/// Stores a breaker transition as an event record (off the request path, in waitUntil).
pub async fn insert_event(env: &Env, tenant: &str, kind: &str, at: u64, body: &str) {
    let written = match Db::open(env) {
        Ok(db) => db.insert_event(tenant, kind, at, body).await,
        Err(e) => Err(e),
    };
    if let Err(e) = written {
        logged(e);
    }
}
