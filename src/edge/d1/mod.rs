//! The one D1 adapter: every SQL statement of the worker lives in this folder, split by table
//! group (`tenants` tenants, caller keys, settings and events; `catalog` providers, models,
//! aliases and rules; `config` the request path's reads and event inserts; `usage` the usage
//! roll-ups the ledger flushes and the usage API reads). No table name is built by formatting;
//! checks that must hold at the moment of a write (`INSERT … WHERE NOT EXISTS`, batches) stay
//! inside one method.

mod catalog;
pub mod config;
mod tenants;
mod usage;

pub use usage::{Flush, MAX_ROWS_PER_FLUSH};

use crate::admin::store::{StoreError, Stored};
use crate::api::ApiError;
use serde::de::DeserializeOwned;
use worker::wasm_bindgen::JsValue;
use worker::{console_error, D1Database, D1PreparedStatement, D1Result, Env};

/// Logs a storage fault with its cause and answers the caller with a bare 500.
pub fn storage_error(what: &str, e: impl std::fmt::Display) -> ApiError {
    console_error!(
        "{}",
        serde_json::json!({"msg": "storage error", "op": what, "error": e.to_string()})
    );
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

/// A rule read back: its chain checked again (`Chain`'s serde), its `cache_affinity_s` column
/// beside it; a value out of range is a damaged row, refused like a bad chain.
pub fn stored_rule(chain: &str, cache_affinity_s: Option<f64>) -> Stored<crate::config::Chain> {
    let secs = match cache_affinity_s {
        None => None,
        Some(s) if s.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&s) => Some(s as u32),
        Some(_) => return Err(StoreError::new("stored rule", "bad cache_affinity_s")),
    };
    let secs = crate::config::rule::check_cache_affinity("cache_affinity_s", secs)
        .map_err(|e| StoreError::new("stored rule", e))?;
    Ok(parse_stored::<crate::config::Chain>(chain)?.with_cache_affinity(secs))
}

pub fn to_stored<T: serde::Serialize>(value: &T) -> Stored<String> {
    serde_json::to_string(value).map_err(|e| StoreError::new("encode spec", e))
}
