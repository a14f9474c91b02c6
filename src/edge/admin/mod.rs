//! Admin handlers: authenticate, parse into validated config, write D1, invalidate the cache.
//! Every body is validated completely before the first write, and multi-row writes go in one
//! D1 batch (a transaction), so a refused request changes nothing. This file authenticates and
//! dispatches; `db` holds the D1 helpers, `tenants` tenants and caller keys, `catalog` providers,
//! models, aliases and rules, `operations` settings, events and breaker resets.

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

mod catalog;
mod db;
mod operations;
mod tenants;

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
