//! The request path's reads (a caller key by its hash, a tenant's whole config in one batch)
//! and the event inserts the routing objects' transitions produce.

use super::{js, num, parse_stored, rows, stored_rule, Db, RuleRow};
use crate::admin::store::{StoreError, Stored};
use crate::config::config_rows::ConfigRows;
use crate::config::{AliasName, CallerKey, TenantId};
use crate::usage::generation::stored_generation;
use serde::Deserialize;

impl Db {
    pub async fn caller_key(&self, key_hash: &str) -> Stored<Option<CallerKey>> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
            tenant_id: TenantId,
            policy: String,
            generation: Option<f64>,
        }
        let found: Vec<Row> = self
            .all(
                "SELECT k.id, k.tenant_id, k.policy, t.generation FROM caller_keys k \
                 LEFT JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ?1",
                &[js(key_hash)],
            )
            .await?;
        found
            .into_iter()
            .next()
            .map(|r| {
                Ok(CallerKey {
                    tenant: r.tenant_id,
                    id: r.id,
                    policy: std::rc::Rc::new(parse_stored(&r.policy)?),
                    generation: stored_generation(r.generation),
                })
            })
            .transpose()
    }

    /// One D1 round trip: a batch of five reads.
    pub async fn config_rows(&self, tenant: &TenantId) -> Stored<Option<ConfigRows>> {
        #[derive(Deserialize)]
        struct TenantRow {
            settings: String,
            health_mode: Option<String>,
        }
        #[derive(Deserialize)]
        struct Spec {
            spec: String,
        }
        #[derive(Deserialize)]
        struct Written {
            spec: String,
            updated_at: f64,
        }
        #[derive(Deserialize)]
        struct Named {
            name: String,
            spec: String,
            updated_at: f64,
        }
        let t = [js(tenant.as_str())];
        let results = self
            .batch(vec![
                self.stmt(
                    "SELECT settings, health_mode FROM tenants WHERE id = ?1",
                    &t,
                )?,
                self.stmt("SELECT spec FROM providers WHERE tenant_id = ?1", &t)?,
                self.stmt(
                    "SELECT spec, updated_at FROM models WHERE tenant_id = ?1",
                    &t,
                )?,
                self.stmt(
                    "SELECT name, spec, updated_at FROM aliases WHERE tenant_id = ?1",
                    &t,
                )?,
                self.stmt(crate::admin::stored_rule::RULE_ROWS_SQL, &t)?,
            ])
            .await?;
        let [t_rows, p_rows, m_rows, a_rows, r_rows] = results.as_slice() else {
            return Err(StoreError::new(
                "load config",
                "batch returned the wrong number of results",
            ));
        };
        let Some(tenant_row) = rows::<TenantRow>(t_rows)?.into_iter().next() else {
            return Ok(None);
        };
        let secs = |ms: f64| (ms / 1000.0) as u64;
        Ok(Some(ConfigRows {
            settings: parse_stored(&tenant_row.settings)?,
            health_mode: tenant_row.health_mode,
            providers: rows::<Spec>(p_rows)?
                .iter()
                .map(|r| parse_stored(&r.spec))
                .collect::<Stored<_>>()?,
            models: rows::<Written>(m_rows)?
                .iter()
                .map(|r| Ok((parse_stored(&r.spec)?, secs(r.updated_at))))
                .collect::<Stored<_>>()?,
            aliases: rows::<Named>(a_rows)?
                .iter()
                .map(|r| {
                    let name =
                        AliasName::parse(&r.name).map_err(|e| StoreError::new("alias name", e))?;
                    Ok((name, parse_stored(&r.spec)?, secs(r.updated_at)))
                })
                .collect::<Stored<_>>()?,
            rules: rows::<RuleRow>(r_rows)?
                .into_iter()
                .map(|r| Ok((stored_rule(&r)?, secs(r.updated_at))))
                .collect::<Stored<_>>()?,
        }))
    }

    /// Stores a breaker transition as an event record (off the request path, in waitUntil).
    pub async fn insert_event(&self, tenant: &str, kind: &str, at: u64, body: &str) -> Stored<()> {
        self.run(
            "INSERT INTO events (tenant_id, kind, at, body) VALUES (?1, ?2, ?3, ?4)",
            &[js(tenant), js(kind), num(at), js(body)],
        )
        .await
        .map(|_| ())
    }
}
