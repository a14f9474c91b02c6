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
pub use crate::admin::stored_rule::{parse_stored, stored_rule, to_stored, RuleRow};
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

/// A statement's one parameter: the tenant id.
fn tid(t: &crate::config::TenantId) -> [JsValue; 1] {
    [js(t.as_str())]
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
