//! The statements: the tenants the scheduled pass watches, their degraded-mode state,
//! the alert secret, and retention.

use super::{js, num, Db};
use crate::admin::store::Stored;
use crate::config::TenantId;
use crate::scheduled::{Visited, Watched};
use crate::usage::generation::stored_generation;
use crate::usage::retention::Cutoffs;
use serde::Deserialize;
use worker::wasm_bindgen::JsValue;

/// What an alert delivery needs of the tenant: its settings, its sealed secret and the
/// generation of the tenant now holding the id.
#[derive(Deserialize)]
pub struct AlertTarget {
    pub settings: String,
    pub alert_secret: Option<String>,
    generation: Option<f64>,
}

impl AlertTarget {
    pub fn generation(&self) -> u64 {
        stored_generation(self.generation)
    }
}

impl Db {
    /// A breaker of the tenant opened: the scheduled pass visits it from now on.
    pub async fn watch(&self, tenant: &str) -> Stored<()> {
        self.run(
            "INSERT OR IGNORE INTO health_watch (tenant_id, visited_at) VALUES (?1, 0)",
            &[js(tenant)],
        )
        .await
        .map(|_| ())
    }

    /// At most `limit` watched tenants, the longest unvisited first.
    pub async fn watched(&self, limit: u32) -> Stored<Vec<Watched>> {
        self.all(
            "SELECT w.tenant_id, t.health_mode FROM health_watch w \
             JOIN tenants t ON t.id = w.tenant_id ORDER BY w.visited_at, w.tenant_id LIMIT ?1",
            &[num(u64::from(limit))],
        )
        .await
    }

    /// After a visit: the state if it changed, and whether the tenant stays watched.
    pub async fn visited(&self, tenant: &TenantId, visit: Visited) -> Stored<()> {
        let Visited {
            at: now,
            mode,
            keep,
        } = visit;
        let t = js(tenant.as_str());
        let mut stmts = vec![if keep {
            self.stmt(
                "UPDATE health_watch SET visited_at = ?2 WHERE tenant_id = ?1",
                &[t.clone(), num(now)],
            )?
        } else {
            self.stmt(
                "DELETE FROM health_watch WHERE tenant_id = ?1",
                std::slice::from_ref(&t),
            )?
        }];
        if let Some(mode) = mode {
            let mode = mode.as_deref().map_or(JsValue::NULL, js);
            stmts.push(self.stmt(
                "UPDATE tenants SET health_mode = ?2 WHERE id = ?1",
                &[t, mode],
            )?);
        }
        self.batch(stmts).await.map(|_| ())
    }

    /// The tenant's stored degraded-mode state (`/v1/health`).
    pub async fn health_mode(&self, tenant: &TenantId) -> Stored<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            health_mode: Option<String>,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT health_mode FROM tenants WHERE id = ?1",
                &[js(tenant.as_str())],
            )
            .await?;
        Ok(rows.into_iter().next().and_then(|r| r.health_mode))
    }

    pub async fn alert_target(&self, tenant: &str) -> Stored<Option<AlertTarget>> {
        let rows: Vec<AlertTarget> = self
            .all(
                "SELECT settings, alert_secret, generation FROM tenants WHERE id = ?1",
                &[js(tenant)],
            )
            .await?;
        Ok(rows.into_iter().next())
    }

    /// The generation of the tenant holding the id now; `None` when there is none.
    pub async fn tenant_generation(&self, tenant: &str) -> Stored<Option<u64>> {
        #[derive(Deserialize)]
        struct Row {
            generation: Option<f64>,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT generation FROM tenants WHERE id = ?1",
                &[js(tenant)],
            )
            .await?;
        Ok(rows
            .into_iter()
            .next()
            .map(|r| stored_generation(r.generation)))
    }

    /// Retention: events and roll-ups past their cutoffs, and watches of deleted tenants.
    pub async fn delete_expired(&self, c: Cutoffs) -> Stored<()> {
        self.batch(vec![
            self.stmt(
                "DELETE FROM events WHERE at < ?1",
                &[num(c.events_before_ms)],
            )?,
            self.stmt(
                "DELETE FROM usage_rollups WHERE minute < ?1",
                &[num(c.usage_before_minute)],
            )?,
            self.stmt(
                "DELETE FROM health_watch WHERE tenant_id NOT IN (SELECT id FROM tenants)",
                &[],
            )?,
        ])
        .await
        .map(|_| ())
    }
}
