//! The admin API as a pure core: each command takes validated input, applies the rules (a
//! provider still in use, a depth limit against existing chains, one namespace for model ids
//! and alias names), calls the storage port and returns a view or a typed error. The worker's
//! admin route only authenticates, reads the body and adapts D1 and the routing objects to the
//! ports; the in-memory store (`memory`) lets host tests reach every rule.

pub mod access;
mod catalog;
mod explain;
mod explain_query;
mod keys;
mod operations;
mod policy_patch;
mod rule_sort;
mod stats;
pub mod store;
pub mod stored_rule;
mod tenants;
mod usage;
pub mod views;

#[cfg(test)]
mod openapi_check;

#[cfg(not(target_arch = "wasm32"))]
pub mod memory;
#[cfg(not(target_arch = "wasm32"))]
mod memory_routing;
#[cfg(not(target_arch = "wasm32"))]
mod memory_usage;

use crate::api::endpoint::OPENAPI;
use crate::api::{ApiError, Endpoint, ErrorKind};
use crate::config::sealed::Kek;
use crate::config::{ConfigError, Defaults};
pub use explain::{explain, DryRun, ExplainControl};
pub use explain_query::ExplainQuery;
use serde::Serialize;
pub use store::{AdminStore, LedgerControl, RoutingControl, StoreError};

/// The HTTP methods the admin API answers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Other,
}

/// What an admin command answers: a status and a JSON body, or the OpenAPI document as stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The view serialized once, straight from the typed view (no JSON tree in between).
    Json(u16, Vec<u8>),
    OpenApi(&'static str),
}

/// What a command can fail with: a refusal for the caller, or a storage fault for the log.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandError {
    Api(ApiError),
    Store(StoreError),
}

impl From<ApiError> for CommandError {
    fn from(e: ApiError) -> Self {
        Self::Api(e)
    }
}

impl From<StoreError> for CommandError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<ConfigError> for CommandError {
    fn from(e: ConfigError) -> Self {
        Self::Api(config_error(e))
    }
}

pub type Answer = Result<Reply, CommandError>;

fn json<T: Serialize>(status: u16, value: &T) -> Answer {
    let body = serde_json::to_vec(value).map_err(|e| StoreError::new("encode view", e))?;
    Ok(Reply::Json(status, body))
}

pub fn config_error(e: ConfigError) -> ApiError {
    let field = e.field().map(str::to_owned);
    let err = ApiError::new(ErrorKind::InvalidRequest, e.to_string());
    match field {
        Some(f) => err.with_param(f),
        None => err,
    }
}

fn conflict(message: String) -> CommandError {
    CommandError::Api(ApiError::new(ErrorKind::Conflict, message))
}

fn not_found(what: &str) -> CommandError {
    CommandError::Api(ApiError::not_found(what))
}

/// 409: a write's depth check failed, but no longer does when read again: another admin changed
/// the depth or the rules in between.
fn depth_changed() -> CommandError {
    conflict(
        "The tenant's max_fallback_depth or routing rules changed during the write; try again."
            .to_owned(),
    )
}

pub fn unauthorized() -> ApiError {
    ApiError::new(ErrorKind::InvalidAdminKey, "Missing or invalid admin key.")
}

/// The deployment facts and capabilities a command may need besides storage.
pub struct Context<'a> {
    pub now: u64,
    pub defaults: &'a Defaults,
    pub allow_http_upstreams: bool,
    pub kek: Option<&'a Kek>,
    /// Fills the buffer from a CSPRNG; false when none is available.
    pub random: &'a dyn Fn(&mut [u8]) -> bool,
}

pub struct Admin<'a, S, R> {
    store: &'a S,
    routing: &'a R,
    cx: Context<'a>,
}

/// The Durable Objects the admin side reaches: routing state and the tenant's ledger (and,
/// for `explain`, the request path's view of the tenant).
pub trait ObjectControl: RoutingControl + LedgerControl + ExplainControl {}

impl<T: RoutingControl + LedgerControl + ExplainControl> ObjectControl for T {}

impl<'a, S: AdminStore, R: ObjectControl> Admin<'a, S, R> {
    pub fn new(store: &'a S, routing: &'a R, cx: Context<'a>) -> Self {
        Self { store, routing, cx }
    }

    fn random<const N: usize>(&self) -> Result<[u8; N], CommandError> {
        let mut buf = [0u8; N];
        if (self.cx.random)(&mut buf) {
            Ok(buf)
        } else {
            Err(CommandError::Store(StoreError::new("random", "no CSPRNG")))
        }
    }

    /// Runs one admin request. `route` is already parsed; the body is read but not parsed.
    pub async fn handle(
        &self,
        verb: Verb,
        route: Endpoint,
        body: &[u8],
        query: Option<&str>,
    ) -> Answer {
        use Verb::{Delete, Get, Patch, Post, Put};
        if let Some(t) = route.tenant() {
            if !self.store.tenant_exists(t).await? {
                return Err(not_found(&format!("Tenant '{t}'")));
            }
        }
        match (verb, route) {
            (Get, Endpoint::OpenApi) => Ok(Reply::OpenApi(OPENAPI)),
            (Post, Endpoint::Tenants) => self.create_tenant(body).await,
            (Get, Endpoint::Tenants) => self.list_tenants().await,
            (Get, Endpoint::Tenant(t)) => self.get_tenant(&t).await,
            (Delete, Endpoint::Tenant(t)) => self.delete_tenant(&t).await,
            (Post, Endpoint::ApiKeys(t)) => self.create_key(&t, body).await,
            (Get, Endpoint::ApiKeys(t)) => self.list_keys(&t).await,
            (Patch, Endpoint::ApiKey(t, id)) => self.patch_key(&t, &id, body).await,
            (Delete, Endpoint::ApiKey(t, id)) => self.delete_key(&t, &id).await,
            (Get, Endpoint::Providers(t)) => self.list_providers(&t).await,
            (Get, Endpoint::Provider(t, p)) => self.get_provider(&t, &p).await,
            (Put, Endpoint::Provider(t, p)) => self.put_provider(&t, p, body).await,
            (Delete, Endpoint::Provider(t, p)) => self.delete_provider(&t, &p).await,
            (Get, Endpoint::Models(t)) => self.list_models(&t).await,
            (Get, Endpoint::Model(t, m)) => self.get_model(&t, &m).await,
            (Put, Endpoint::Model(t, m)) => self.put_model(&t, m, body).await,
            (Delete, Endpoint::Model(t, m)) => self.delete_model(&t, &m).await,
            (Get, Endpoint::Aliases(t)) => self.list_aliases(&t).await,
            (Get, Endpoint::Alias(t, a)) => self.get_alias(&t, &a).await,
            (Put, Endpoint::Alias(t, a)) => self.put_alias(&t, a, body).await,
            (Delete, Endpoint::Alias(t, a)) => self.delete_alias(&t, &a).await,
            (Get, Endpoint::Rules(t)) => self.list_rules(&t).await,
            (Put, Endpoint::Rules(t)) => self.put_rule(&t, body).await,
            (Delete, Endpoint::Rule(t, m)) => self.delete_rule(&t, &m).await,
            (Post, Endpoint::RuleSort(t, m)) => self.sort_rule(&t, &m, body).await,
            (Get, Endpoint::Settings(t)) => self.get_settings(&t).await,
            (Put, Endpoint::Settings(t)) => self.put_settings(&t, body).await,
            (Get, Endpoint::Events(t)) => self.list_events(&t, query).await,
            (Post, Endpoint::BreakerReset(t)) => self.reset_breakers(&t, body).await,
            (Get, Endpoint::Usage(t)) => self.usage(&t, query).await,
            (Get, Endpoint::Stats(t)) => self.stats(&t).await,
            (Get, Endpoint::Explain(t)) => self.explain(&t, query).await,
            _ => Err(CommandError::Api(ApiError::method_not_allowed())),
        }
    }
}

/// `name=value` from a query string, undecoded.
fn query_param<'q>(query: Option<&'q str>, name: &str) -> Option<&'q str> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}
