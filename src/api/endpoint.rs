//! Paths to routes, validated once: a handler receives typed names, never raw path segments.

use super::error::{ApiError, ErrorKind};
pub use super::route_table::{
    allowed_methods, example_path, is_unknown_method, ADMIN_OPERATIONS, CALLER_OPERATIONS,
    CONSOLE_OPERATIONS,
};
use crate::config::{AliasName, ModelId, NameError, ProviderName, RouteName, TenantId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Health,
    /// `GET /v1/providers/health`: the providers a caller key reaches, as their state shows them.
    ProvidersHealth,
    ListModels,
    /// `GET /v1/models/metrics`: the live stats of the models the key may use.
    ModelMetrics,
    RetrieveModel(String),
    ChatCompletions,
    Messages,
    /// `POST /v1/messages/count_tokens` (Claude Code adds `?beta=true`, which is not part of the path).
    CountTokens,
    Responses,
    Embeddings,
    OpenApi,
    Tenants,
    Tenant(TenantId),
    ApiKeys(TenantId),
    ApiKey(TenantId, String),
    Providers(TenantId),
    Provider(TenantId, ProviderName),
    Models(TenantId),
    Model(TenantId, ModelId),
    Aliases(TenantId),
    Alias(TenantId, AliasName),
    Rules(TenantId),
    /// A routing rule by its name (a rule written without one is named after its match).
    Rule(TenantId, RouteName),
    /// `POST .../routing-rules/{rule}/sort`: the rule's chain reordered by a preset.
    RuleSort(TenantId, RouteName),
    Settings(TenantId),
    Events(TenantId),
    BreakerReset(TenantId),
    Usage(TenantId),
    Stats(TenantId),
    /// `GET /admin/v1/tenants/{t}/explain`: a dry run of a name's chain.
    Explain(TenantId),
    /// `GET /admin/v1/metrics`: Prometheus text of every tenant.
    Metrics,
    /// `GET /console` and its script and style: a public page, no credential.
    Console(ConsoleFile),
}

/// The console's files, served from the worker's own bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleFile {
    Page,
    Script,
    Style,
}

impl Endpoint {
    pub fn is_admin(&self) -> bool {
        !matches!(
            self,
            Self::Health
                | Self::ProvidersHealth
                | Self::ListModels
                | Self::ModelMetrics
                | Self::RetrieveModel(_)
                | Self::ChatCompletions
                | Self::Messages
                | Self::CountTokens
                | Self::Responses
                | Self::Embeddings
                | Self::Console(_)
        )
    }

    /// The tenant an admin route belongs to.
    pub fn tenant(&self) -> Option<&TenantId> {
        match self {
            Self::Tenant(t)
            | Self::ApiKeys(t)
            | Self::ApiKey(t, _)
            | Self::Providers(t)
            | Self::Provider(t, _)
            | Self::Models(t)
            | Self::Model(t, _)
            | Self::Aliases(t)
            | Self::Alias(t, _)
            | Self::Rules(t)
            | Self::Rule(t, _)
            | Self::RuleSort(t, _)
            | Self::Settings(t)
            | Self::Events(t)
            | Self::BreakerReset(t)
            | Self::Usage(t)
            | Self::Stats(t)
            | Self::Explain(t) => Some(t),
            _ => None,
        }
    }

    pub fn parse(path: &str) -> Result<Self, ApiError> {
        let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
        match segments.as_slice() {
            ["v1", "health"] => Ok(Self::Health),
            ["v1", "providers", "health"] => Ok(Self::ProvidersHealth),
            ["v1", "models"] => Ok(Self::ListModels),
            ["v1", "chat", "completions"] => Ok(Self::ChatCompletions),
            ["v1", "messages"] => Ok(Self::Messages),
            ["v1", "messages", "count_tokens"] => Ok(Self::CountTokens),
            ["v1", "responses"] => Ok(Self::Responses),
            ["v1", "embeddings"] => Ok(Self::Embeddings),
            // Before `{model}`, which takes the rest: no model can be called `metrics` here.
            ["v1", "models", "metrics"] => Ok(Self::ModelMetrics),
            // Model ids may hold `/`, sent raw or as `%2F`.
            ["v1", "models", id @ ..] => {
                let parts: Result<Vec<String>, ApiError> = id.iter().map(|s| decode(s)).collect();
                Ok(Self::RetrieveModel(parts?.join("/")))
            }
            ["console"] => Ok(Self::Console(ConsoleFile::Page)),
            ["console", "app.js"] => Ok(Self::Console(ConsoleFile::Script)),
            ["console", "app.css"] => Ok(Self::Console(ConsoleFile::Style)),
            ["admin", "v1", "openapi.json"] => Ok(Self::OpenApi),
            ["admin", "v1", "metrics"] => Ok(Self::Metrics),
            ["admin", "v1", "tenants"] => Ok(Self::Tenants),
            ["admin", "v1", "tenants", t, rest @ ..] => {
                tenant_route(name(t, TenantId::parse)?, rest)
            }
            _ => Err(not_found()),
        }
    }
}

fn tenant_route(t: TenantId, rest: &[&str]) -> Result<Endpoint, ApiError> {
    Ok(match rest {
        [] => Endpoint::Tenant(t),
        ["api-keys"] => Endpoint::ApiKeys(t),
        ["api-keys", id] => Endpoint::ApiKey(t, decode(id)?),
        ["providers"] => Endpoint::Providers(t),
        ["providers", p] => Endpoint::Provider(t, name(p, ProviderName::parse)?),
        ["models"] => Endpoint::Models(t),
        ["models", m] => Endpoint::Model(t, name(m, ModelId::parse)?),
        ["aliases"] => Endpoint::Aliases(t),
        ["aliases", a] => Endpoint::Alias(t, name(a, AliasName::parse)?),
        ["routing-rules"] => Endpoint::Rules(t),
        ["routing-rules", m] => Endpoint::Rule(t, name(m, RouteName::parse)?),
        ["routing-rules", m, "sort"] => Endpoint::RuleSort(t, name(m, RouteName::parse)?),
        ["settings"] => Endpoint::Settings(t),
        ["events"] => Endpoint::Events(t),
        ["breakers", "reset"] => Endpoint::BreakerReset(t),
        ["usage"] => Endpoint::Usage(t),
        ["stats"] => Endpoint::Stats(t),
        ["explain"] => Endpoint::Explain(t),
        _ => return Err(not_found()),
    })
}

fn not_found() -> ApiError {
    ApiError::new(ErrorKind::NotFound, "No such route.")
}

fn name<T>(segment: &str, parse: fn(&str) -> Result<T, NameError>) -> Result<T, ApiError> {
    let decoded = decode(segment)?;
    parse(&decoded)
        .map_err(|e| ApiError::new(ErrorKind::InvalidPath, format!("Invalid path: {e}.")))
}

/// Percent-decoding of one path segment (model ids carry `/` as `%2F`).
pub fn decode(segment: &str) -> Result<String, ApiError> {
    let bad = || ApiError::new(ErrorKind::InvalidPath, "Invalid percent-encoding in path.");
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let pair = bytes.get(i + 1..i + 3).ok_or_else(bad)?;
            let mut byte = [0u8; 1];
            ::hex::decode_to_slice(pair, &mut byte).map_err(|_| bad())?;
            out.push(byte[0]);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// The path of a serialized WHATWG URL (`Request.url`), as workers-rs's `Request::path` gives
/// it: special schemes always serialize a path, and `?` and `#` inside it are percent-encoded.
pub fn path_of(url: &str) -> String {
    let Some(host_start) = url.find("://").map(|i| i + 3) else {
        return if url.starts_with('/') {
            url.to_owned()
        } else {
            format!("/{url}")
        };
    };
    match url[host_start..].find('/') {
        Some(i) => {
            let path = &url[host_start + i..];
            path[..path.find(['?', '#']).unwrap_or(path.len())].to_owned()
        }
        None => "/".to_owned(),
    }
}

/// The OpenAPI 3.1 document (admin and caller routes), served at `/admin/v1/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_arrive_percent_encoded() {
        assert_eq!(
            Endpoint::parse("/admin/v1/tenants/acme/models/meta-llama%2FLlama-3.3-70B"),
            Ok(Endpoint::Model(
                TenantId::parse("acme").unwrap(),
                ModelId::parse("meta-llama/Llama-3.3-70B").unwrap()
            ))
        );
    }

    #[test]
    fn invalid_names_in_paths_are_400_not_404() {
        let e = Endpoint::parse("/admin/v1/tenants/Bad_Id").unwrap_err();
        assert_eq!(e.status(), 400);
        let e = Endpoint::parse(&format!("/admin/v1/tenants/{}", "a".repeat(64))).unwrap_err();
        assert_eq!(e.status(), 400);
    }

    #[test]
    fn unknown_paths_are_404() {
        for p in [
            "/",
            "/v2/chat",
            "/admin/v1/tenants/acme/nope",
            "/admin/v1/tenants/acme/models/a/b",
        ] {
            assert_eq!(Endpoint::parse(p).map_err(|e| e.status()), Err(404), "{p}");
        }
    }

    #[test]
    fn every_operation_parses_to_an_admin_route() {
        for (_, t) in ADMIN_OPERATIONS {
            let route = Endpoint::parse(&example_path(t)).unwrap();
            assert!(route.is_admin(), "{t}");
        }
        for (_, t) in CALLER_OPERATIONS.iter().chain(CONSOLE_OPERATIONS) {
            let route = Endpoint::parse(&example_path(t)).unwrap();
            assert!(!route.is_admin(), "{t}");
        }
    }

    #[test]
    fn a_model_id_with_a_slash_is_retrieved_whether_sent_raw_or_encoded() {
        for path in ["/v1/models/meta/llama-3", "/v1/models/meta%2Fllama-3"] {
            assert_eq!(
                Endpoint::parse(path).unwrap(),
                Endpoint::RetrieveModel("meta/llama-3".into())
            );
        }
    }

    #[test]
    fn openapi_document_lists_exactly_the_admin_and_caller_operations() {
        let doc: serde_json::Value = serde_json::from_str(OPENAPI).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        let mut documented: Vec<(String, String)> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, ops)| {
                ops.as_object()
                    .unwrap()
                    .keys()
                    .filter(|k| ["get", "put", "post", "delete", "patch"].contains(&k.as_str()))
                    .map(move |m| (m.clone(), path.clone()))
            })
            .collect();
        let mut expected: Vec<(String, String)> = ADMIN_OPERATIONS
            .iter()
            .chain(CALLER_OPERATIONS)
            .chain(CONSOLE_OPERATIONS)
            .map(|(m, p)| (m.to_string(), p.to_string()))
            .collect();
        documented.sort();
        expected.sort();
        assert_eq!(documented, expected);
    }

    #[test]
    fn a_405_names_the_methods_the_path_answers_to() {
        assert_eq!(allowed_methods("/v1/chat/completions"), ["POST"]);
        assert_eq!(
            allowed_methods("/admin/v1/tenants/acme/providers/openai"),
            ["DELETE", "GET", "PUT"]
        );
        assert_eq!(allowed_methods("/admin/v1/tenants"), ["GET", "POST"]);
        assert_eq!(allowed_methods("/v1/models/meta-llama/Llama-3"), ["GET"]);
        assert!(allowed_methods("/nope").is_empty());
        // Every operation's own path allows its own method.
        for (m, t) in ADMIN_OPERATIONS
            .iter()
            .chain(CALLER_OPERATIONS)
            .chain(CONSOLE_OPERATIONS)
        {
            let allowed = allowed_methods(&example_path(t));
            assert!(
                allowed.contains(&m.to_uppercase().as_str()),
                "{m} {t}: {allowed:?}"
            );
        }
    }

    #[test]
    fn the_console_is_a_public_page_with_its_own_script_and_style() {
        for (path, file) in [
            ("/console", ConsoleFile::Page),
            ("/console/", ConsoleFile::Page),
            ("/console/app.js", ConsoleFile::Script),
            ("/console/app.css", ConsoleFile::Style),
        ] {
            let route = Endpoint::parse(path).unwrap();
            assert_eq!(route, Endpoint::Console(file), "{path}");
            assert!(!route.is_admin() && route.tenant().is_none(), "{path}");
        }
        assert_eq!(allowed_methods("/console"), ["GET"]);
        assert_eq!(
            Endpoint::parse("/console/other.js").unwrap_err().status(),
            404
        );
    }

    #[test]
    fn a_method_the_runtime_would_read_as_get_is_unknown() {
        for m in ["QUERY", "PROPFIND", "FOO", ""] {
            assert!(is_unknown_method(m), "{m}");
        }
        for m in [
            "GET", "get", "POST", "PUT", "DELETE", "PATCH", "patch", "HEAD", "OPTIONS",
        ] {
            assert!(!is_unknown_method(m), "{m}");
        }
    }

    #[test]
    fn bad_percent_encoding_is_refused() {
        assert!(decode("%zz").is_err());
        assert!(decode("%f").is_err());
        assert!(decode("%+f").is_err(), "a sign is not a hex digit");
        assert_eq!(decode("a%20b").unwrap(), "a b");
    }

    #[test]
    fn a_url_path_stops_at_its_query_or_fragment_and_a_bare_host_is_the_root() {
        assert_eq!(
            path_of("https://gw.example/v1/messages?beta=true"),
            "/v1/messages"
        );
        assert_eq!(path_of("https://gw.example/v1/models#x"), "/v1/models");
        assert_eq!(path_of("https://gw.example"), "/");
        assert_eq!(
            path_of("http://127.0.0.1:8787/admin/v1/tenants"),
            "/admin/v1/tenants"
        );
        assert_eq!(path_of("/v1/health"), "/v1/health");
        assert_eq!(path_of("v1/health"), "/v1/health");
    }
}
