//! The one D1 adapter: every SQL statement of the worker lives in this folder, split by table
//! group (`tenants` tenants, caller keys, settings and events; `catalog` providers, models,
//! aliases and rules; `config` the request path's reads and event inserts; `usage` the usage
//! roll-ups the ledger flushes and the usage API reads). No table name is built by formatting;
//! checks that must hold at the moment of a write (`INSERT … WHERE NOT EXISTS`, batches) stay
//! inside one method.

mod catalog;
pub mod config;
pub mod health;
mod tenants;
mod usage;

pub use usage::{Flush, MAX_ROWS_PER_FLUSH};

use crate::admin::store::{StoreError, Stored};
use crate::api::ApiError;
use serde::de::DeserializeOwned;
use worker::wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result, Env};

/// Logs a storage fault with its cause and answers the caller with a bare 500.
pub fn storage_error(what: &str, e: impl std::fmt::Display) -> ApiError {
    super::events::fault(crate::events::Fault::StorageError {
        op: what,
        error: &e,
    });
    ApiError::internal()
}

/// A store error on its way to the caller: logged with its cause, answered as a bare 500.
pub fn logged(e: StoreError) -> ApiError {
    storage_error(e.op(), e.cause())
}

pub fn js(s: &str) -> JsValue {
    JsValue::from_str(s)
}

pub fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// The worker's D1 database, as the admin store and the request path's reads use it.
pub struct Db {
    db: D1Database,
}

impl Db {
    pub fn open(env: &Env) -> Stored<Self> {
        env.d1("DB")
            .map(|db| Self { db })
            .map_err(|e| StoreError::new("binding", e))
    }

    pub(super) fn stmt(
        &self,
        sql: &'static str,
        params: &[JsValue],
    ) -> Stored<D1PreparedStatement> {
        self.db
            .prepare(sql)
            .bind(params)
            .map_err(|e| StoreError::new("bind", e))
    }

    pub(super) async fn run(&self, sql: &'static str, params: &[JsValue]) -> Stored<D1Result> {
        self.stmt(sql, params)?
            .run()
            .await
            .map_err(|e| StoreError::new("write", e))
    }

    pub(super) async fn all<T: DeserializeOwned>(
        &self,
        sql: &'static str,
        params: &[JsValue],
    ) -> Stored<Vec<T>> {
        let r = self
            .stmt(sql, params)?
            .all()
            .await
            .map_err(|e| StoreError::new("read", e))?;
        rows(&r)
    }

    pub(super) async fn batch(&self, stmts: Vec<D1PreparedStatement>) -> Stored<Vec<D1Result>> {
        self.db
            .batch(stmts)
            .await
            .map_err(|e| StoreError::new("batch", e))
    }
}

pub fn rows<T: DeserializeOwned>(r: &D1Result) -> Stored<Vec<T>> {
    r.results::<T>().map_err(|e| StoreError::new("decode", e))
}

/// Rows a write changed (0 when D1 reports no meta).
pub fn changes(r: &D1Result) -> usize {
    r.meta().ok().flatten().and_then(|m| m.changes).unwrap_or(0)
}

pub fn parse_stored<T: DeserializeOwned>(json: &str) -> Stored<T> {
    serde_json::from_str(json).map_err(|e| StoreError::new("stored spec", e))
}

/// A rule's row as stored (keyed by name, `when_json` and `on_refusal` beside the
/// chain).
#[derive(serde::Deserialize)]
pub struct RuleRow {
    pub name: String,
    pub match_name: String,
    pub priority: f64,
    pub when_json: Option<String>,
    pub on_refusal: String,
    pub chain: String,
    pub cache_affinity_s: Option<f64>,
    /// The response cache's TTL for this rule (migration 0007).
    #[serde(default)]
    pub cache_ttl_s: Option<f64>,
    pub updated_at: f64,
}

/// A rule read back, checked again like one written (its chain by `Chain`'s serde, its
/// `cache_affinity_s`, priority and `when` by the same rules as the admin body): a damaged row is
/// refused, never routed by.
pub fn stored_rule(row: &RuleRow) -> Stored<crate::config::Rule> {
    let damaged = |why: &str| StoreError::new("stored rule", why);
    let whole = |v: f64, lo: f64, hi: f64| v.fract() == 0.0 && (lo..=hi).contains(&v);
    let secs = match row.cache_affinity_s {
        None => None,
        Some(s) if whole(s, 0.0, f64::from(u32::MAX)) => Some(s as u32),
        Some(_) => return Err(damaged("bad cache_affinity_s")),
    };
    let secs = crate::config::rule::check_cache_affinity("cache_affinity_s", secs)
        .map_err(|e| StoreError::new("stored rule", e))?;
    let ttl = match row.cache_ttl_s {
        None => None,
        Some(s) if whole(s, 0.0, f64::from(u32::MAX)) => Some(s as u32),
        Some(_) => return Err(damaged("bad cache_ttl_s")),
    };
    let ttl = crate::config::response_cache::check_cache_ttl("cache_ttl_s", ttl)
        .map_err(|e| StoreError::new("stored rule", e))?;
    if !whole(row.priority, f64::from(i32::MIN), f64::from(i32::MAX)) {
        return Err(damaged("bad priority"));
    }
    let on_refusal = match row.on_refusal.as_str() {
        "answer" => crate::config::OnRefusal::Answer,
        "fallback" => crate::config::OnRefusal::Fallback,
        _ => return Err(damaged("bad on_refusal")),
    };
    let name =
        |s: &str| crate::config::RouteName::parse(s).map_err(|e| StoreError::new("stored rule", e));
    let when = match &row.when_json {
        None => None,
        Some(json) => Some(
            crate::config::condition::When::parse(parse_stored(json)?)
                .map_err(|e| StoreError::new("stored rule", e))?,
        ),
    };
    Ok(crate::config::Rule {
        name: name(&row.name)?,
        matches: name(&row.match_name)?,
        priority: row.priority as i32,
        when,
        chain: parse_stored::<crate::config::Chain>(&row.chain)?
            .with_cache_affinity(secs)
            .with_cache_ttl(ttl)
            .with_on_refusal(on_refusal),
    })
}

pub fn to_stored<T: serde::Serialize>(value: &T) -> Stored<String> {
    serde_json::to_string(value).map_err(|e| StoreError::new("encode spec", e))
}
