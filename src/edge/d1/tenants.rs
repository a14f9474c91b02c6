//! The tenant store on D1: tenants, caller keys, settings and events.

use super::{changes, js, num, parse_stored, tid, to_stored, Db};
use crate::admin::store::{
    AlertSecretWrite, Created, DepthWrite, EventRow, KeyRow, NewKey, PolicyPatch, Stored,
    TenantRecord, TenantRow, TenantStore,
};
use crate::config::{Alias, AliasName, SettingsOverrides, TenantId};
use crate::usage::generation::dead_through;
use serde::Deserialize;

#[derive(Deserialize)]
struct KeyRowStored {
    id: String,
    created_at: u64,
    policy: String,
}

impl KeyRowStored {
    fn open(self) -> Stored<KeyRow> {
        Ok(KeyRow {
            id: self.id,
            created_at: self.created_at,
            policy: parse_stored(&self.policy)?,
        })
    }
}

impl Db {
    /// The generations of a tenant id that are gone: through the last one it was given, or
    /// through the one before its live row's if it was created again meanwhile. `None` for an
    /// id never created since generations were kept.
    pub async fn dead_generations_through(&self, t: &TenantId) -> Stored<Option<u64>> {
        #[derive(Deserialize)]
        struct Row {
            last: f64,
            live: Option<f64>,
        }
        let found: Vec<Row> = self
            .all(
                "SELECT g.generation AS last, t.generation AS live FROM tenant_generations g \
                 LEFT JOIN tenants t ON t.id = g.tenant_id WHERE g.tenant_id = ?1",
                &tid(t),
            )
            .await?;
        Ok(found
            .into_iter()
            .next()
            .and_then(|r| dead_through(r.last, r.live)))
    }
}

impl Db {
    /// Every tenant with its providers (none: one row with `provider` null), in one query: what
    /// a metrics scrape reads from D1, whatever the number of tenants.
    pub async fn tenants_with_providers(&self) -> Stored<Vec<(TenantId, Option<String>)>> {
        #[derive(Deserialize)]
        struct Row {
            tenant: TenantId,
            provider: Option<String>,
        }
        let found: Vec<Row> = self
            .all(
                "SELECT t.id AS tenant, p.name AS provider FROM tenants t \
                 LEFT JOIN providers p ON p.tenant_id = t.id ORDER BY t.id, p.name",
                &[],
            )
            .await?;
        Ok(found.into_iter().map(|r| (r.tenant, r.provider)).collect())
    }
}

impl TenantStore for Db {
    async fn tenant_exists(&self, t: &TenantId) -> Stored<bool> {
        #[derive(Deserialize)]
        struct One {}
        let found: Vec<One> = self
            .all("SELECT 1 AS one FROM tenants WHERE id = ?1", &tid(t))
            .await?;
        Ok(!found.is_empty())
    }

    /// One batch (a transaction). A batch that fails on an existing id leaves nothing behind;
    /// whether that was the cause is asked of the table, not read from the error's text.
    async fn create_tenant(
        &self,
        row: &TenantRow,
        aliases: &[(AliasName, Alias)],
    ) -> Stored<Created> {
        if self.tenant_exists(&row.id).await? {
            return Ok(Created::AlreadyExists);
        }
        // The id's next generation, taken in the same transaction as the row: a failed create
        // takes none, and a deleted id's counter stays behind for its next creation.
        let mut stmts = vec![
            self.stmt(
                "INSERT INTO tenant_generations (tenant_id, generation) VALUES (?1, 1) \
                 ON CONFLICT (tenant_id) DO UPDATE SET generation = generation + 1",
                &tid(&row.id),
            )?,
            self.stmt(
                "INSERT INTO tenants (id, name, settings, created_at, generation) \
                 VALUES (?1, ?2, '{}', ?3, \
                 (SELECT generation FROM tenant_generations WHERE tenant_id = ?1))",
                &[js(row.id.as_str()), js(&row.name), num(row.created_at)],
            )?,
        ];
        for (name, alias) in aliases {
            stmts.push(self.alias_upsert(&row.id, name, alias, row.created_at)?);
        }
        match self.batch(stmts).await {
            Ok(_) => Ok(Created::Created),
            Err(_) if self.tenant_exists(&row.id).await? => Ok(Created::AlreadyExists),
            Err(e) => Err(e),
        }
    }

    async fn list_tenants(&self) -> Stored<Vec<TenantRow>> {
        #[derive(Deserialize)]
        struct Row {
            id: TenantId,
            name: String,
            created_at: u64,
        }
        let found: Vec<Row> = self
            .all("SELECT id, name, created_at FROM tenants ORDER BY id", &[])
            .await?;
        Ok(found
            .into_iter()
            .map(|r| TenantRow {
                id: r.id,
                name: r.name,
                created_at: r.created_at,
            })
            .collect())
    }

    async fn tenant(&self, t: &TenantId) -> Stored<Option<TenantRecord>> {
        #[derive(Deserialize)]
        struct Row {
            name: String,
            created_at: u64,
            settings: String,
        }
        let found: Vec<Row> = self
            .all(
                "SELECT name, created_at, settings FROM tenants WHERE id = ?1",
                &tid(t),
            )
            .await?;
        found
            .into_iter()
            .next()
            .map(|r| {
                Ok(TenantRecord {
                    settings: parse_stored(&r.settings)?,
                    row: TenantRow {
                        id: t.clone(),
                        name: r.name,
                        created_at: r.created_at,
                    },
                })
            })
            .transpose()
    }

    async fn delete_tenant(&self, t: &TenantId) -> Stored<()> {
        let stmts = [
            "DELETE FROM events WHERE tenant_id = ?1",
            "DELETE FROM usage_rollups WHERE tenant_id = ?1",
            "DELETE FROM usage_flushes WHERE tenant_id = ?1",
            "DELETE FROM routing_rules WHERE tenant_id = ?1",
            "DELETE FROM aliases WHERE tenant_id = ?1",
            "DELETE FROM models WHERE tenant_id = ?1",
            "DELETE FROM providers WHERE tenant_id = ?1",
            "DELETE FROM caller_keys WHERE tenant_id = ?1",
            "DELETE FROM tenants WHERE id = ?1",
        ]
        .into_iter()
        .map(|sql| self.stmt(sql, &tid(t)))
        .collect::<Stored<Vec<_>>>()?;
        self.batch(stmts).await.map(|_| ())
    }

    /// One statement: written only while no rule's chain is longer than `max_depth`; the
    /// settings and the signing secret together (`?4` = 1: the secret becomes `?5`).
    async fn put_settings(
        &self,
        t: &TenantId,
        settings: &SettingsOverrides,
        max_depth: u32,
        secret: AlertSecretWrite<'_>,
    ) -> Stored<DepthWrite> {
        let stored = to_stored(settings)?;
        let null = worker::wasm_bindgen::JsValue::NULL;
        let (replace, sealed) = match secret {
            AlertSecretWrite::Keep => (0, null),
            AlertSecretWrite::Set(sealed) => (1, js(sealed)),
            AlertSecretWrite::Clear => (1, null),
        };
        let r = self
            .run(
                "UPDATE tenants SET settings = ?2, \
                   alert_secret = CASE WHEN ?4 = 1 THEN ?5 ELSE alert_secret END \
                 WHERE id = ?1 \
                 AND NOT EXISTS (SELECT 1 FROM routing_rules \
                   WHERE tenant_id = ?1 AND json_array_length(chain) > ?3)",
                &[
                    js(t.as_str()),
                    js(&stored),
                    num(u64::from(max_depth)),
                    num(replace),
                    sealed,
                ],
            )
            .await?;
        Ok(DepthWrite::from_written(changes(&r) > 0))
    }

    async fn insert_key(&self, t: &TenantId, key: &NewKey) -> Stored<()> {
        self.run(
            "INSERT INTO caller_keys (id, tenant_id, key_hash, created_at, policy) VALUES (?1, ?2, ?3, ?4, ?5)",
            &[
                js(&key.id),
                js(t.as_str()),
                js(&key.key_hash),
                num(key.created_at),
                js(&to_stored(&key.policy)?),
            ],
        )
        .await
        .map(|_| ())
    }

    async fn list_keys(&self, t: &TenantId) -> Stored<Vec<KeyRow>> {
        let found: Vec<KeyRowStored> = self
            .all(
                "SELECT id, created_at, policy FROM caller_keys WHERE tenant_id = ?1 ORDER BY created_at, id",
                &tid(t),
            )
            .await?;
        found.into_iter().map(KeyRowStored::open).collect()
    }

    /// One statement: SQLite's `json_patch` is RFC 7396, the merge `PolicyPatch::apply` does,
    /// applied to the policy stored at the moment of the write.
    async fn merge_key_policy(
        &self,
        t: &TenantId,
        id: &str,
        patch: &PolicyPatch,
    ) -> Stored<Option<KeyRow>> {
        let found: Vec<KeyRowStored> = self
            .all(
                "UPDATE caller_keys SET policy = json_patch(policy, ?3) \
                 WHERE tenant_id = ?1 AND id = ?2 RETURNING id, created_at, policy",
                &[js(t.as_str()), js(id), js(&patch.to_json())],
            )
            .await?;
        found.into_iter().next().map(KeyRowStored::open).transpose()
    }

    async fn delete_key(&self, t: &TenantId, id: &str) -> Stored<bool> {
        self.delete(
            "DELETE FROM caller_keys WHERE tenant_id = ?1 AND id = ?2",
            t,
            id,
        )
        .await
    }

    async fn events(&self, t: &TenantId, since: u64, limit: u32) -> Stored<Vec<EventRow>> {
        #[derive(Deserialize)]
        struct Row {
            seq: u64,
            body: String,
        }
        let found: Vec<Row> = self
            .all(
                "SELECT seq, body FROM events WHERE tenant_id = ?1 AND at >= ?2 ORDER BY seq LIMIT ?3",
                &[js(t.as_str()), num(since), num(u64::from(limit))],
            )
            .await?;
        Ok(found
            .into_iter()
            .map(|r| EventRow {
                seq: r.seq,
                body: r.body,
            })
            .collect())
    }
}
