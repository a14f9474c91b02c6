//! Usage roll-ups: the ledger's flush (one batch of upserts, summed into existing rows) and the
//! usage API's read, grouped in SQL.

use super::{js, num, Db};
use crate::admin::store::{Stored, UsageStore};
use crate::config::TenantId;
use crate::governance::usage_query::{GroupBy, UsageQuery};
use crate::usage::rollup::SummedRow;
use crate::usage::{RollupKey, UsageSums};
use worker::wasm_bindgen::JsValue;

/// Rows one flush writes at most (one statement each, in one batch): D1 counts every statement
/// of a batch toward the queries one invocation may make. The rest waits for the next flush.
pub const MAX_ROWS_PER_FLUSH: usize = 500;

/// One roll-up row, added to what is stored, but only while the tenant row of the flush's
/// generation exists (usage of a deleted tenant never lands in a re-created one) and only if
/// this flush was not applied before (`usage_flushes`: a flush sent again after a restart adds
/// nothing). SQLite needs the `WHERE` on an `INSERT … SELECT` that has an upsert clause.
const UPSERT: &str = "INSERT INTO usage_rollups (tenant_id, minute, model, provider, key_id, \
     end_user, requests, prompt_tokens, completion_tokens, cached_tokens, cost_usd, cache_hits, saved_usd, \
     cache_write_tokens, cache_savings_usd) \
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?14, ?15, ?16, ?17 \
     WHERE EXISTS (SELECT 1 FROM tenants WHERE id = ?1 AND generation = ?12) \
     AND NOT EXISTS (SELECT 1 FROM usage_flushes \
       WHERE tenant_id = ?1 AND generation = ?12 AND last_flush >= ?13) \
     ON CONFLICT (tenant_id, minute, model, provider, key_id, end_user) DO UPDATE SET \
     requests = requests + excluded.requests, \
     prompt_tokens = prompt_tokens + excluded.prompt_tokens, \
     completion_tokens = completion_tokens + excluded.completion_tokens, \
     cached_tokens = cached_tokens + excluded.cached_tokens, \
     cost_usd = cost_usd + excluded.cost_usd, \
     cache_hits = cache_hits + excluded.cache_hits, saved_usd = saved_usd + excluded.saved_usd, \
     cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens, \
     cache_savings_usd = cache_savings_usd + excluded.cache_savings_usd";

/// The flush's number, recorded in the same batch after its rows (which read the old value).
const FLUSH_APPLIED: &str = "INSERT INTO usage_flushes (tenant_id, generation, last_flush) \
     SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM tenants WHERE id = ?1 AND generation = ?2) \
     ON CONFLICT (tenant_id, generation) DO UPDATE SET \
     last_flush = MAX(last_flush, excluded.last_flush)";

/// One ledger flush: whose rows, which creation of the tenant, and its number.
pub struct Flush<'a> {
    pub tenant: &'a TenantId,
    pub generation: u64,
    pub seq: u64,
    pub rows: &'a [(RollupKey, UsageSums)],
}

/// The usage read for one grouping: the same statement but for the group expression.
macro_rules! usage_by {
    ($group:literal) => {
        concat!(
            "SELECT ",
            $group,
            " AS grp, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens, \
             SUM(completion_tokens) AS completion_tokens, SUM(cached_tokens) AS cached_tokens, \
             SUM(cost_usd) AS cost_usd, SUM(cache_hits) AS cache_hits, \
             SUM(saved_usd) AS saved_usd, SUM(cache_write_tokens) AS cache_write_tokens, \
             SUM(cache_savings_usd) AS cache_savings_usd FROM usage_rollups \
             WHERE tenant_id = ?1 AND minute >= ?2 AND minute < ?3 GROUP BY grp ORDER BY grp"
        )
    };
}

fn sql_for(group: GroupBy) -> &'static str {
    match group {
        GroupBy::Model => usage_by!("model"),
        GroupBy::Provider => usage_by!("provider"),
        GroupBy::Key => usage_by!("key_id"),
        GroupBy::User => usage_by!("end_user"),
        GroupBy::Day => usage_by!("strftime('%Y-%m-%d', minute / 1000, 'unixepoch')"),
    }
}

fn count(n: u64) -> JsValue {
    num(n)
}

impl Db {
    /// Adds the rows to the stored roll-ups, all or nothing, at most once per flush number;
    /// nothing when the tenant of that generation is gone.
    pub async fn add_rollups(&self, flush: &Flush<'_>) -> Stored<()> {
        let tenant = js(flush.tenant.as_str());
        let mut stmts = flush
            .rows
            .iter()
            .map(|(k, s)| {
                self.stmt(
                    UPSERT,
                    &[
                        tenant.clone(),
                        num(k.minute),
                        js(&k.model),
                        js(&k.provider),
                        js(&k.key_id),
                        js(&k.end_user),
                        count(s.requests),
                        count(s.prompt_tokens),
                        count(s.completion_tokens),
                        count(s.cached_tokens),
                        JsValue::from_f64(s.cost_usd),
                        num(flush.generation),
                        num(flush.seq),
                        count(s.cache_hits),
                        JsValue::from_f64(s.saved_usd),
                        count(s.cache_write_tokens),
                        JsValue::from_f64(s.cache_savings_usd),
                    ],
                )
            })
            .collect::<Stored<Vec<_>>>()?;
        if stmts.is_empty() {
            return Ok(());
        }
        stmts.push(self.stmt(
            FLUSH_APPLIED,
            &[tenant, num(flush.generation), num(flush.seq)],
        )?);
        self.batch(stmts).await.map(|_| ())
    }
}

impl UsageStore for Db {
    /// Sums of every minute overlapping `[from, to)`, per group, in group order.
    async fn usage(&self, tenant: &TenantId, q: &UsageQuery) -> Stored<Vec<(String, UsageSums)>> {
        let found: Vec<SummedRow> = self
            .all(
                sql_for(q.group_by),
                &[js(tenant.as_str()), num(q.first_minute()), num(q.to_ms)],
            )
            .await?;
        Ok(found.into_iter().map(SummedRow::into_group).collect())
    }
}
