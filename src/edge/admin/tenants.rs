//! Tenants and their caller keys.

use super::*;

impl Admin<'_> {
    pub(super) async fn create_tenant(&self, body: &[u8]) -> HttpReply {
        let (id, name) = parse_body::<TenantBody>(body)
            .and_then(TenantBody::validate)
            .map_err(config_error)?;
        let mut stmts = vec![self.stmt(
            "INSERT INTO tenants (id, name, settings, created_at) VALUES (?1, ?2, '{}', ?3)",
            &[js(id.as_str()), js(&name), self.now_js()],
        )?];
        for (alias, spec) in default_aliases() {
            stmts.push(self.alias_upsert(&id, &alias, &spec)?);
        }
        match self.batch(stmts).await {
            Ok(_) => {}
            Err(e) if e.to_string().contains("UNIQUE") || e.to_string().contains("constraint") => {
                return Err(conflict(format!("Tenant '{id}' already exists.")))
            }
            Err(e) => return Err(storage_error("create tenant", e)),
        }
        let settings = self.dep.defaults.effective(&SettingsOverrides::default());
        http::json(
            201,
            &json!({"id": id, "name": name, "created_at": self.now, "settings": settings}),
        )
    }

    pub(super) async fn list_tenants(&self) -> HttpReply {
        #[derive(Deserialize, serde::Serialize)]
        struct Row {
            id: String,
            name: String,
            created_at: u64,
        }
        let rows: Vec<Row> = self
            .all("SELECT id, name, created_at FROM tenants ORDER BY id", &[])
            .await?;
        http::json(200, &json!({"data": rows}))
    }

    pub(super) async fn get_tenant(&self, t: &TenantId) -> HttpReply {
        #[derive(Deserialize)]
        struct Row {
            name: String,
            created_at: u64,
            settings: String,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT name, created_at, settings FROM tenants WHERE id = ?1",
                &[js(t.as_str())],
            )
            .await?;
        let row = rows
            .first()
            .ok_or_else(|| ApiError::not_found(&format!("Tenant '{t}'")))?;
        let overrides: SettingsOverrides = store::parse_stored(&row.settings)?;
        let settings = self.dep.defaults.effective(&overrides);
        http::json(
            200,
            &json!({"id": t, "name": row.name, "created_at": row.created_at, "settings": settings}),
        )
    }

    pub(super) async fn delete_tenant(&self, t: &TenantId) -> HttpReply {
        let providers = self.provider_names(t).await?;
        let tid = [js(t.as_str())];
        let stmts = [
            "DELETE FROM events WHERE tenant_id = ?1",
            "DELETE FROM routing_rules WHERE tenant_id = ?1",
            "DELETE FROM aliases WHERE tenant_id = ?1",
            "DELETE FROM models WHERE tenant_id = ?1",
            "DELETE FROM providers WHERE tenant_id = ?1",
            "DELETE FROM caller_keys WHERE tenant_id = ?1",
            "DELETE FROM tenants WHERE id = ?1",
        ]
        .iter()
        .map(|sql| self.stmt(sql, &tid))
        .collect::<Result<Vec<_>, _>>()?;
        self.batch(stmts)
            .await
            .map_err(|e| storage_error("delete tenant", e))?;
        for p in providers {
            self.wipe_routing_state(t, &p).await;
        }
        http::json(200, &json!({"deleted": t}))
    }

    // ---- caller keys ------------------------------------------------------------------------

    pub(super) async fn create_key(&self, t: &TenantId) -> HttpReply {
        let (id, key) = mint_caller_key(&random_bytes::<32>()?);
        self.run(
            "INSERT INTO caller_keys (id, tenant_id, key_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
            &[js(&id), js(t.as_str()), js(&hash_key(&key)), self.now_js()],
        )
        .await?;
        http::json(201, &json!({"id": id, "key": key, "created_at": self.now}))
    }

    pub(super) async fn list_keys(&self, t: &TenantId) -> HttpReply {
        #[derive(Deserialize, serde::Serialize)]
        struct Row {
            id: String,
            created_at: u64,
        }
        let rows: Vec<Row> = self
            .all("SELECT id, created_at FROM caller_keys WHERE tenant_id = ?1 ORDER BY created_at, id", &[js(t.as_str())])
            .await?;
        http::json(200, &json!({"data": rows}))
    }

    pub(super) async fn delete_key(&self, t: &TenantId, id: &str) -> HttpReply {
        let r = self
            .run(
                "DELETE FROM caller_keys WHERE tenant_id = ?1 AND id = ?2",
                &[js(t.as_str()), js(id)],
            )
            .await?;
        if changes(&r) == 0 {
            return Err(ApiError::not_found(&format!("The API key '{id}'")));
        }
        http::json(200, &json!({"deleted": id}))
    }
}
