//! Admin handlers: authenticate, parse into validated config, write D1, invalidate the cache.
//! Every body is validated completely before the first write, and multi-row writes go in one
//! D1 batch (a transaction), so a refused request changes nothing.

use super::deployment::Deployment;
use super::http::{self, header, now_ms, random_bytes, HttpReply};
use super::routing_object::{call_object, record_transitions, ResetRequest};
use super::store::{self, js, rows, storage_error};
use crate::api::auth::{bearer, hash_key, mint_caller_key, secrets_match};
use crate::api::route::OPENAPI;
use crate::api::{views, ApiError, ErrorType, Route};
use crate::config::admin_body::{
    alias_name_from, parse_body, validate_settings, AliasBody, BreakerReset, ModelBody,
    ProviderBody, RuleBody, TenantBody,
};
use crate::config::alias::default_aliases;
use crate::config::{
    Alias, AliasName, CatalogModel, ConfigError, ModelId, ProviderName, RouteName,
    SettingsOverrides, StoredProvider, TenantId,
};
use crate::routing::dead_entries;
use crate::state::provider_state::ModelTransition;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use worker::wasm_bindgen::JsValue;
use worker::{Context, D1Database, D1PreparedStatement, D1Result, Env, Method, Request};

fn unauthorized() -> ApiError {
    ApiError::new(
        401,
        ErrorType::AuthenticationError,
        "invalid_admin_key",
        "Missing or invalid admin key.",
    )
}

fn config_error(e: ConfigError) -> ApiError {
    let field = e.field().map(str::to_owned);
    let err = ApiError::invalid_request(400, "invalid_request", e.to_string());
    match field {
        Some(f) => err.with_param(f),
        None => err,
    }
}

fn conflict(message: String) -> ApiError {
    ApiError::invalid_request(409, "conflict", message)
}

fn authorize(req: &Request, env: &Env) -> Result<(), ApiError> {
    let expected = env
        .secret("CG_ADMIN")
        .map(|s| s.to_string())
        .unwrap_or_default();
    let given = header(req, "authorization");
    match bearer(given.as_deref()) {
        Some(token) if secrets_match(token, &expected) => Ok(()),
        _ => Err(unauthorized()),
    }
}

pub async fn handle(
    mut req: Request,
    env: &Env,
    ctx: &Context,
    dep: &Deployment,
    route: Route,
) -> HttpReply {
    authorize(&req, env)?;
    let method = req.method();
    let body = match method {
        Method::Post | Method::Put => http::read_body(&mut req, dep.max_admin_body).await?,
        _ => Vec::new(),
    };
    let admin = Admin {
        env,
        ctx,
        dep,
        db: store::db(env)?,
        now: now_ms(),
    };
    let query = req.url().ok().and_then(|u| u.query().map(str::to_owned));
    let written = route_tenant(&route).cloned();
    let reply = admin
        .dispatch(method.clone(), route, &body, query.as_deref())
        .await;
    if reply.is_ok() && method != Method::Get {
        if let Some(t) = written {
            store::invalidate_tenant(&t);
        }
    }
    reply
}

fn route_tenant(route: &Route) -> Option<&TenantId> {
    match route {
        Route::Tenant(t)
        | Route::ApiKeys(t)
        | Route::ApiKey(t, _)
        | Route::Providers(t)
        | Route::Provider(t, _)
        | Route::Models(t)
        | Route::Model(t, _)
        | Route::Aliases(t)
        | Route::Alias(t, _)
        | Route::Rules(t)
        | Route::Rule(t, _)
        | Route::Settings(t)
        | Route::Events(t)
        | Route::BreakerReset(t) => Some(t),
        _ => None,
    }
}

struct Admin<'a> {
    env: &'a Env,
    ctx: &'a Context,
    dep: &'a Deployment,
    db: D1Database,
    now: u64,
}

#[derive(Deserialize)]
struct Spec {
    spec: String,
}

impl Admin<'_> {
    async fn dispatch(
        &self,
        method: Method,
        route: Route,
        body: &[u8],
        query: Option<&str>,
    ) -> HttpReply {
        use Method::{Delete, Get, Post, Put};
        if let Some(t) = route_tenant(&route) {
            self.require_tenant(t).await?;
        }
        match (method, route) {
            (Get, Route::OpenApi) => {
                http::bytes(200, "application/json", OPENAPI.as_bytes().to_vec())
            }
            (Post, Route::Tenants) => self.create_tenant(body).await,
            (Get, Route::Tenants) => self.list_tenants().await,
            (Get, Route::Tenant(t)) => self.get_tenant(&t).await,
            (Delete, Route::Tenant(t)) => self.delete_tenant(&t).await,
            (Post, Route::ApiKeys(t)) => self.create_key(&t).await,
            (Get, Route::ApiKeys(t)) => self.list_keys(&t).await,
            (Delete, Route::ApiKey(t, id)) => self.delete_key(&t, &id).await,
            (Get, Route::Providers(t)) => self.list_providers(&t).await,
            (Get, Route::Provider(t, p)) => self.get_provider(&t, &p).await,
            (Put, Route::Provider(t, p)) => self.put_provider(&t, p, body).await,
            (Delete, Route::Provider(t, p)) => self.delete_provider(&t, &p).await,
            (Get, Route::Models(t)) => self.list_models(&t).await,
            (Get, Route::Model(t, m)) => self.get_model(&t, &m).await,
            (Put, Route::Model(t, m)) => self.put_model(&t, m, body).await,
            (Delete, Route::Model(t, m)) => {
                self.delete_row("models", "id", &t, m.as_str(), "model")
                    .await
            }
            (Get, Route::Aliases(t)) => self.list_aliases(&t).await,
            (Get, Route::Alias(t, a)) => self.get_alias(&t, &a).await,
            (Put, Route::Alias(t, a)) => self.put_alias(&t, a, body).await,
            (Delete, Route::Alias(t, a)) => {
                self.delete_row("aliases", "name", &t, a.as_str(), "alias")
                    .await
            }
            (Get, Route::Rules(t)) => self.list_rules(&t).await,
            (Put, Route::Rules(t)) => self.put_rule(&t, body).await,
            (Delete, Route::Rule(t, m)) => {
                self.delete_row(
                    "routing_rules",
                    "match_name",
                    &t,
                    m.as_str(),
                    "routing rule",
                )
                .await
            }
            (Get, Route::Settings(t)) => self.get_settings(&t).await,
            (Put, Route::Settings(t)) => self.put_settings(&t, body).await,
            (Get, Route::Events(t)) => self.list_events(&t, query).await,
            (Post, Route::BreakerReset(t)) => self.reset_breakers(&t, body).await,
            _ => Err(ApiError::method_not_allowed()),
        }
    }

    // ---- D1 helpers -------------------------------------------------------------------------

    fn stmt(&self, sql: &str, params: &[JsValue]) -> Result<D1PreparedStatement, ApiError> {
        self.db
            .prepare(sql)
            .bind(params)
            .map_err(|e| storage_error("bind", e))
    }

    async fn run(&self, sql: &str, params: &[JsValue]) -> Result<D1Result, ApiError> {
        self.stmt(sql, params)?
            .run()
            .await
            .map_err(|e| storage_error("write", e))
    }

    async fn all<T: DeserializeOwned>(
        &self,
        sql: &str,
        params: &[JsValue],
    ) -> Result<Vec<T>, ApiError> {
        let r = self
            .stmt(sql, params)?
            .all()
            .await
            .map_err(|e| storage_error("read", e))?;
        rows(&r)
    }

    async fn batch(&self, stmts: Vec<D1PreparedStatement>) -> Result<Vec<D1Result>, worker::Error> {
        self.db.batch(stmts).await
    }

    fn now_js(&self) -> JsValue {
        JsValue::from_f64(self.now as f64)
    }

    async fn require_tenant(&self, t: &TenantId) -> Result<(), ApiError> {
        #[derive(Deserialize)]
        struct One {}
        let found: Vec<One> = self
            .all(
                "SELECT 1 AS one FROM tenants WHERE id = ?1",
                &[js(t.as_str())],
            )
            .await?;
        if found.is_empty() {
            return Err(ApiError::not_found(&format!("Tenant '{t}'")));
        }
        Ok(())
    }

    async fn specs<T: DeserializeOwned>(
        &self,
        table: &str,
        t: &TenantId,
    ) -> Result<Vec<T>, ApiError> {
        let sql = format!("SELECT spec FROM {table} WHERE tenant_id = ?1 ORDER BY rowid");
        let rows: Vec<Spec> = self.all(&sql, &[js(t.as_str())]).await?;
        rows.iter().map(|r| store::parse_stored(&r.spec)).collect()
    }

    async fn spec<T: DeserializeOwned>(
        &self,
        table: &str,
        key_col: &str,
        t: &TenantId,
        key: &str,
        what: &str,
    ) -> Result<T, ApiError> {
        let sql = format!("SELECT spec FROM {table} WHERE tenant_id = ?1 AND {key_col} = ?2");
        let rows: Vec<Spec> = self.all(&sql, &[js(t.as_str()), js(key)]).await?;
        let row = rows
            .first()
            .ok_or_else(|| ApiError::not_found(&format!("The {what} '{key}'")))?;
        store::parse_stored(&row.spec)
    }

    async fn delete_row(
        &self,
        table: &str,
        key_col: &str,
        t: &TenantId,
        key: &str,
        what: &str,
    ) -> HttpReply {
        let sql = format!("DELETE FROM {table} WHERE tenant_id = ?1 AND {key_col} = ?2");
        let r = self.run(&sql, &[js(t.as_str()), js(key)]).await?;
        if changes(&r) == 0 {
            return Err(ApiError::not_found(&format!("The {what} '{key}'")));
        }
        http::json(200, &json!({"deleted": key}))
    }

    // ---- tenants ----------------------------------------------------------------------------

    async fn create_tenant(&self, body: &[u8]) -> HttpReply {
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

    async fn list_tenants(&self) -> HttpReply {
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

    async fn get_tenant(&self, t: &TenantId) -> HttpReply {
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

    async fn delete_tenant(&self, t: &TenantId) -> HttpReply {
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

    async fn create_key(&self, t: &TenantId) -> HttpReply {
        let (id, key) = mint_caller_key(&random_bytes::<32>()?);
        self.run(
            "INSERT INTO caller_keys (id, tenant_id, key_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
            &[js(&id), js(t.as_str()), js(&hash_key(&key)), self.now_js()],
        )
        .await?;
        http::json(201, &json!({"id": id, "key": key, "created_at": self.now}))
    }

    async fn list_keys(&self, t: &TenantId) -> HttpReply {
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

    async fn delete_key(&self, t: &TenantId, id: &str) -> HttpReply {
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

    // ---- providers --------------------------------------------------------------------------

    async fn provider_names(&self, t: &TenantId) -> Result<Vec<String>, ApiError> {
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

    async fn list_providers(&self, t: &TenantId) -> HttpReply {
        let providers: Vec<StoredProvider> = self.specs("providers", t).await?;
        let data: Vec<Value> = providers.iter().map(views::provider).collect();
        http::json(200, &json!({"data": data}))
    }

    async fn get_provider(&self, t: &TenantId, p: &ProviderName) -> HttpReply {
        let provider: StoredProvider = self
            .spec("providers", "name", t, p.as_str(), "provider")
            .await?;
        http::json(200, &views::provider(&provider))
    }

    async fn put_provider(&self, t: &TenantId, p: ProviderName, body: &[u8]) -> HttpReply {
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

    async fn delete_provider(&self, t: &TenantId, p: &ProviderName) -> HttpReply {
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
    async fn wipe_routing_state(&self, t: &TenantId, provider: &str) {
        let wiped: worker::Result<Vec<ModelTransition>> =
            call_object(self.env, t, provider, Method::Post, "/wipe", None).await;
        if let Err(e) = wiped {
            storage_error("wipe routing state", e);
        }
    }

    // ---- models -----------------------------------------------------------------------------

    async fn list_models(&self, t: &TenantId) -> HttpReply {
        let models: Vec<CatalogModel> = self.specs("models", t).await?;
        let data: Vec<Value> = models.iter().map(views::model).collect();
        http::json(200, &json!({"data": data}))
    }

    async fn get_model(&self, t: &TenantId, m: &ModelId) -> HttpReply {
        let model: CatalogModel = self.spec("models", "id", t, m.as_str(), "model").await?;
        http::json(200, &views::model(&model))
    }

    async fn put_model(&self, t: &TenantId, id: ModelId, body: &[u8]) -> HttpReply {
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

    fn alias_upsert(
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

    async fn list_aliases(&self, t: &TenantId) -> HttpReply {
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

    async fn get_alias(&self, t: &TenantId, a: &AliasName) -> HttpReply {
        let alias: Alias = self.spec("aliases", "name", t, a.as_str(), "alias").await?;
        http::json(200, &views::alias(a, &alias))
    }

    async fn put_alias(&self, t: &TenantId, name: AliasName, body: &[u8]) -> HttpReply {
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

    async fn list_rules(&self, t: &TenantId) -> HttpReply {
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

    async fn put_rule(&self, t: &TenantId, body: &[u8]) -> HttpReply {
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

    // ---- settings ---------------------------------------------------------------------------

    async fn get_settings(&self, t: &TenantId) -> HttpReply {
        let cfg = store::load_config(self.env, t, &self.dep.defaults)
            .await?
            .ok_or_else(|| ApiError::not_found(&format!("Tenant '{t}'")))?;
        http::json(200, &cfg.settings)
    }

    async fn put_settings(&self, t: &TenantId, body: &[u8]) -> HttpReply {
        let overrides = parse_body::<SettingsOverrides>(body)
            .and_then(validate_settings)
            .map_err(config_error)?;
        let effective = self.dep.defaults.effective(&overrides);
        let cfg = store::load_config(self.env, t, &self.dep.defaults)
            .await?
            .ok_or_else(|| ApiError::not_found(&format!("Tenant '{t}'")))?;
        let too_long: Vec<String> = cfg
            .rules
            .iter()
            .filter(|(_, c)| c.len() > effective.max_fallback_depth as usize)
            .map(|(m, c)| format!("'{m}' ({} entries)", c.len()))
            .collect();
        if !too_long.is_empty() {
            return Err(config_error(ConfigError::invalid(
                "max_fallback_depth",
                format!(
                    "{} would be below the chain length of routing rules {}",
                    effective.max_fallback_depth,
                    too_long.join(", ")
                ),
            )));
        }
        let stored = serde_json::to_string(&overrides).map_err(|_| ApiError::internal())?;
        self.run(
            "UPDATE tenants SET settings = ?2 WHERE id = ?1",
            &[js(t.as_str()), js(&stored)],
        )
        .await?;
        http::json(200, &effective)
    }

    // ---- events and breakers ----------------------------------------------------------------

    async fn list_events(&self, t: &TenantId, query: Option<&str>) -> HttpReply {
        let since = match query_param(query, "since") {
            None => 0,
            Some(v) => v.parse::<u64>().map_err(|_| {
                ApiError::invalid_request(
                    400,
                    "invalid_request",
                    "'since' must be epoch milliseconds.",
                )
                .with_param("since")
            })?,
        };
        #[derive(Deserialize)]
        struct Row {
            seq: u64,
            body: String,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT seq, body FROM events WHERE tenant_id = ?1 AND at >= ?2 ORDER BY seq LIMIT 1000",
                &[js(t.as_str()), JsValue::from_f64(since as f64)],
            )
            .await?;
        let data = rows
            .iter()
            .map(|r| {
                let mut v: Value = store::parse_stored(&r.body)?;
                v["seq"] = json!(r.seq);
                Ok(v)
            })
            .collect::<Result<Vec<Value>, ApiError>>()?;
        http::json(200, &json!({"data": data}))
    }

    async fn reset_breakers(&self, t: &TenantId, body: &[u8]) -> HttpReply {
        let target: BreakerReset = if body.iter().all(u8::is_ascii_whitespace) {
            BreakerReset::default()
        } else {
            parse_body(body).map_err(config_error)?
        };
        let names = self.provider_names(t).await?;
        let providers: Vec<String> = match &target.provider {
            Some(p) if !names.iter().any(|n| n == p.as_str()) => {
                return Err(ApiError::not_found(&format!("The provider '{p}'")))
            }
            Some(p) => vec![p.to_string()],
            None => names,
        };
        let request = serde_json::to_string(&ResetRequest {
            model: target.model.map(|m| m.to_string()),
        })
        .ok();
        // This isolate's own grants and skips end at once; other isolates see the reset within
        // their lease.
        super::local_grants::news_for_tenant(t);
        let mut closed = Vec::new();
        for p in providers {
            let transitions: Vec<ModelTransition> =
                call_object(self.env, t, &p, Method::Post, "/reset", request.clone())
                    .await
                    .map_err(|e| storage_error("reset breakers", e))?;
            closed.extend(
                transitions
                    .iter()
                    .map(|tr| json!({"provider": p, "model": tr.model})),
            );
            record_transitions(self.env, self.ctx, t, &p, transitions);
        }
        http::json(200, &json!({"closed": closed}))
    }
}

fn changes(r: &D1Result) -> usize {
    r.meta().ok().flatten().and_then(|m| m.changes).unwrap_or(0)
}

fn query_param<'q>(query: Option<&'q str>, name: &str) -> Option<&'q str> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}
