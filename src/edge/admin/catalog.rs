//! A tenant's catalog: providers, models, aliases and routing rules.

use super::*;

impl Admin<'_> {
    pub(super) async fn provider_names(&self, t: &TenantId) -> Result<Vec<String>, ApiError> {
        #[derive(Deserialize)]
        struct Row {
            name: String,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT name FROM providers WHERE tenant_id = ?1",
                &[js(t.as_str())],
            )
            .await?;
        Ok(rows.into_iter().map(|r| r.name).collect())
    }

    pub(super) async fn list_providers(&self, t: &TenantId) -> HttpReply {
        let providers: Vec<StoredProvider> = self.specs("providers", t).await?;
        let data: Vec<Value> = providers.iter().map(views::provider).collect();
        http::json(200, &json!({"data": data}))
    }

    pub(super) async fn get_provider(&self, t: &TenantId, p: &ProviderName) -> HttpReply {
        let provider: StoredProvider = self
            .spec("providers", "name", t, p.as_str(), "provider")
            .await?;
        http::json(200, &views::provider(&provider))
    }

    pub(super) async fn put_provider(
        &self,
        t: &TenantId,
        p: ProviderName,
        body: &[u8],
    ) -> HttpReply {
        let provider = parse_body::<ProviderBody>(body)
            .and_then(|b| b.validate(p))
            .and_then(|p| {
                p.base_url
                    .check_transport(self.dep.allow_http_upstreams)
                    .map(|()| p)
            })
            .map_err(config_error)?;
        let kek = store::kek(self.env)?;
        let provider = provider
            .seal(t, kek.as_ref(), || random_bytes::<12>().ok())
            .map_err(config_error)?;
        let spec = serde_json::to_string(&provider).map_err(|_| ApiError::internal())?;
        self.run(
            "INSERT INTO providers (tenant_id, name, spec, updated_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (tenant_id, name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at",
            &[js(t.as_str()), js(provider.name.as_str()), js(&spec), self.now_js()],
        )
        .await?;
        http::json(200, &views::provider(&provider))
    }

    pub(super) async fn delete_provider(&self, t: &TenantId, p: &ProviderName) -> HttpReply {
        #[derive(Deserialize)]
        struct Row {
            id: String,
        }
        let users: Vec<Row> = self
            .all(
                "SELECT id FROM models WHERE tenant_id = ?1 AND provider = ?2 ORDER BY id",
                &[js(t.as_str()), js(p.as_str())],
            )
            .await?;
        if !users.is_empty() {
            let ids: Vec<String> = users.into_iter().map(|r| r.id).collect();
            return Err(conflict(format!(
                "Provider '{p}' is used by models: {}. Delete or move them first.",
                ids.join(", ")
            )));
        }
        let reply = self
            .delete_row("providers", "name", t, p.as_str(), "provider")
            .await?;
        self.wipe_routing_state(t, p.as_str()).await;
        Ok(reply)
    }

    /// A deleted provider's parks and breakers must not haunt a new one of the same name.
    pub(super) async fn wipe_routing_state(&self, t: &TenantId, provider: &str) {
        let wiped: worker::Result<Vec<ModelTransition>> =
            call_object(self.env, t, provider, Method::Post, "/wipe", None).await;
        if let Err(e) = wiped {
            storage_error("wipe routing state", e);
        }
    }

    // ---- models -----------------------------------------------------------------------------

    pub(super) async fn list_models(&self, t: &TenantId) -> HttpReply {
        let models: Vec<CatalogModel> = self.specs("models", t).await?;
        let data: Vec<Value> = models.iter().map(views::model).collect();
        http::json(200, &json!({"data": data}))
    }

    pub(super) async fn get_model(&self, t: &TenantId, m: &ModelId) -> HttpReply {
        let model: CatalogModel = self.spec("models", "id", t, m.as_str(), "model").await?;
        http::json(200, &views::model(&model))
    }

    pub(super) async fn put_model(&self, t: &TenantId, id: ModelId, body: &[u8]) -> HttpReply {
        let model = parse_body::<ModelBody>(body)
            .and_then(|b| b.validate(id))
            .map_err(config_error)?;
        let spec = serde_json::to_string(&model).map_err(|_| ApiError::internal())?;
        // One statement: the provider must exist and the id must not be an alias.
        let r = self
            .run(
                "INSERT INTO models (tenant_id, id, provider, spec, updated_at) \
                 SELECT ?1, ?2, ?3, ?4, ?5 \
                 WHERE EXISTS (SELECT 1 FROM providers WHERE tenant_id = ?1 AND name = ?3) \
                   AND NOT EXISTS (SELECT 1 FROM aliases WHERE tenant_id = ?1 AND name = ?2) \
                 ON CONFLICT (tenant_id, id) DO UPDATE SET provider = excluded.provider, spec = excluded.spec, updated_at = excluded.updated_at",
                &[js(t.as_str()), js(model.id.as_str()), js(model.provider.as_str()), js(&spec), self.now_js()],
            )
            .await?;
        if changes(&r) == 0 {
            if self
                .provider_names(t)
                .await?
                .iter()
                .all(|p| p != model.provider.as_str())
            {
                return Err(config_error(ConfigError::invalid(
                    "provider",
                    format!("provider '{}' does not exist", model.provider),
                )));
            }
            return Err(conflict(format!("'{}' is already an alias.", model.id)));
        }
        http::json(200, &views::model(&model))
    }

    // ---- aliases ----------------------------------------------------------------------------

    pub(super) fn alias_upsert(
        &self,
        t: &TenantId,
        name: &AliasName,
        alias: &Alias,
    ) -> Result<D1PreparedStatement, ApiError> {
        let spec = serde_json::to_string(alias).map_err(|_| ApiError::internal())?;
        self.stmt(
            "INSERT INTO aliases (tenant_id, name, spec, updated_at) \
             SELECT ?1, ?2, ?3, ?4 \
             WHERE NOT EXISTS (SELECT 1 FROM models WHERE tenant_id = ?1 AND id = ?2) \
             ON CONFLICT (tenant_id, name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at",
            &[js(t.as_str()), js(name.as_str()), js(&spec), self.now_js()],
        )
    }

    pub(super) async fn list_aliases(&self, t: &TenantId) -> HttpReply {
        #[derive(Deserialize)]
        struct Row {
            name: String,
            spec: String,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT name, spec FROM aliases WHERE tenant_id = ?1 ORDER BY name",
                &[js(t.as_str())],
            )
            .await?;
        let data = rows
            .iter()
            .map(|r| {
                let name = alias_name_from(&r.name).map_err(|e| storage_error("alias name", e))?;
                let alias: Alias = store::parse_stored(&r.spec)?;
                Ok(views::alias(&name, &alias))
            })
            .collect::<Result<Vec<Value>, ApiError>>()?;
        http::json(200, &json!({"data": data}))
    }

    pub(super) async fn get_alias(&self, t: &TenantId, a: &AliasName) -> HttpReply {
        let alias: Alias = self.spec("aliases", "name", t, a.as_str(), "alias").await?;
        http::json(200, &views::alias(a, &alias))
    }

    pub(super) async fn put_alias(&self, t: &TenantId, name: AliasName, body: &[u8]) -> HttpReply {
        let alias = parse_body::<AliasBody>(body)
            .and_then(AliasBody::validate)
            .map_err(config_error)?;
        let r = self
            .alias_upsert(t, &name, &alias)?
            .run()
            .await
            .map_err(|e| storage_error("write alias", e))?;
        if changes(&r) == 0 {
            return Err(conflict(format!("'{name}' is already a catalog model id.")));
        }
        http::json(200, &views::alias(&name, &alias))
    }

    // ---- routing rules ----------------------------------------------------------------------

    pub(super) async fn list_rules(&self, t: &TenantId) -> HttpReply {
        #[derive(Deserialize)]
        struct Row {
            match_name: RouteName,
            chain: String,
        }
        let rows: Vec<Row> = self
            .all("SELECT match_name, chain FROM routing_rules WHERE tenant_id = ?1 ORDER BY match_name", &[js(t.as_str())])
            .await?;
        let data = rows
            .iter()
            .map(|r| Ok(views::rule(&r.match_name, &store::parse_stored(&r.chain)?)))
            .collect::<Result<Vec<Value>, ApiError>>()?;
        http::json(200, &json!({"data": data}))
    }

    pub(super) async fn put_rule(&self, t: &TenantId, body: &[u8]) -> HttpReply {
        let cfg = store::load_config(self.env, t, &self.dep.defaults)
            .await?
            .ok_or_else(|| ApiError::not_found(&format!("Tenant '{t}'")))?;
        let (matches, chain) = parse_body::<RuleBody>(body)
            .and_then(|b| b.validate(cfg.settings.max_fallback_depth))
            .map_err(config_error)?;
        let warnings = dead_entries(&cfg, chain.entries());
        let chain_json = serde_json::to_string(&chain).map_err(|_| ApiError::internal())?;
        self.run(
            "INSERT INTO routing_rules (tenant_id, match_name, chain, updated_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (tenant_id, match_name) DO UPDATE SET chain = excluded.chain, updated_at = excluded.updated_at",
            &[js(t.as_str()), js(matches.as_str()), js(&chain_json), self.now_js()],
        )
        .await?;
        let mut view = views::rule(&matches, &chain);
        view["warnings"] = json!(warnings);
        http::json(200, &view)
    }
}
