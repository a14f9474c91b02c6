//! The tenant setting `restrictions`: where a request's data may be sent. Each is a condition in
//! the rule conditions' language (`when`) and the platforms and providers a request it matches
//! may be served by; a request matching several may use only what every one of them allows (the
//! intersection, `routing::restriction`). Validated when written, with the path of each problem
//! (`restrictions[0].when.metadata.data_class`); read back as written.

use super::condition::{Reads, When};
use super::names::ProviderName;
use super::provider::Platform;
use super::ConfigError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The most restrictions one tenant may have: every request evaluates each one.
pub const MAX_RESTRICTIONS: usize = 32;

/// A restriction as written and shown, for the OpenAPI document. It is read from JSON by `parse`
/// rather than a derived `Deserialize`: a derived reader is compiled once per deserializer (the
/// admin body's, D1's), which the module pays for on every cold start.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestrictionBody {
    /// The requests it applies to, in the rule conditions' language.
    pub when: Map<String, Value>,
    /// The platforms a matching request may be served from (`direct`, `bedrock`, `vertex`,
    /// `azure`, `custom`); absent is any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_platforms: Option<Vec<Platform>>,
    /// The providers a matching request may be served by; absent is any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_providers: Option<Vec<ProviderName>>,
}

/// A validated restriction. `when: None` only for a stored one that no longer reads as valid: it
/// then applies to every request and allows nothing, so a restriction is never dropped open.
#[derive(Debug, Clone, PartialEq)]
pub struct Restriction {
    pub when: Option<When>,
    pub allowed_platforms: Option<Vec<Platform>>,
    pub allowed_providers: Option<Vec<ProviderName>>,
    /// As written.
    body: Value,
}

/// A list field: absent (or null) is `None`; else 1 or more strings, each read by `read`.
fn list<T>(
    obj: &Map<String, Value>,
    field: &str,
    at: &str,
    read: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<Vec<T>>, ConfigError> {
    let at = format!("{at}.{field}");
    let items = match obj.get(field) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(_) => {
            let why = "must list at least one (a request it matches could go nowhere)";
            return Err(ConfigError::invalid(&at, why));
        }
    };
    let each = |(i, v): (usize, &Value)| {
        let bad = |why: String| ConfigError::invalid(&format!("{at}[{i}]"), why);
        v.as_str()
            .ok_or_else(|| bad("must be a string".into()))
            .and_then(|s| read(s).map_err(bad))
    };
    items
        .iter()
        .enumerate()
        .map(each)
        .collect::<Result<_, _>>()
        .map(Some)
}

impl Restriction {
    /// Checks `body`, the restriction at `restrictions[index]`; errors name their path there.
    pub fn parse(body: &Value, index: usize) -> Result<Self, ConfigError> {
        let at = format!("restrictions[{index}]");
        let Value::Object(obj) = body else {
            return Err(ConfigError::invalid(&at, "must be an object"));
        };
        if let Some(k) = obj
            .keys()
            .find(|k| !["when", "allowed_platforms", "allowed_providers"].contains(&k.as_str()))
        {
            let why = "unknown field: use when, allowed_platforms or allowed_providers";
            return Err(ConfigError::invalid(&format!("{at}.{k}"), why));
        }
        let Some(Value::Object(when)) = obj.get("when") else {
            let why = "must be a condition object";
            return Err(ConfigError::invalid(&format!("{at}.when"), why));
        };
        let nested = |e: ConfigError| match e {
            ConfigError::Invalid { field, reason } => ConfigError::Invalid {
                field: format!("{at}.{field}"),
                reason,
            },
            other => other,
        };
        let when = When::parse(when.clone()).map_err(nested)?;
        let platform = |s: &str| {
            Platform::ALL
                .into_iter()
                .find(|p| p.as_str() == s)
                .ok_or_else(|| "must be direct, bedrock, vertex, azure or custom".to_owned())
        };
        let provider = |s: &str| ProviderName::parse(s).map_err(|e| e.to_string());
        let allowed_platforms = list(obj, "allowed_platforms", &at, platform)?;
        let allowed_providers = list(obj, "allowed_providers", &at, provider)?;
        if allowed_platforms.is_none() && allowed_providers.is_none() {
            let why = "must list allowed_platforms or allowed_providers";
            return Err(ConfigError::invalid(&at, why));
        }
        Ok(Self {
            when: Some(when),
            allowed_platforms,
            allowed_providers,
            body: body.clone(),
        })
    }

    /// A stored restriction read back: one that no longer validates applies to every request and
    /// allows nothing (closed, never open).
    pub fn read(body: &Value, index: usize) -> Self {
        Self::parse(body, index).unwrap_or_else(|_| Self {
            when: None,
            allowed_platforms: Some(Vec::new()),
            allowed_providers: Some(Vec::new()),
            body: body.clone(),
        })
    }

    /// Whether an answer from `provider` on `platform` lies inside this restriction.
    pub fn allows(&self, provider: &str, platform: Platform) -> bool {
        self.allowed_platforms
            .as_ref()
            .is_none_or(|ps| ps.contains(&platform))
            && self
                .allowed_providers
                .as_ref()
                .is_none_or(|ps| ps.iter().any(|p| p.as_str() == provider))
    }

    /// What its `when` reads of a request (a closed one reads nothing but applies).
    pub fn reads(&self) -> Reads {
        self.when.as_ref().map_or(
            Reads {
                any: true,
                ..Reads::default()
            },
            When::reads,
        )
    }

    /// As written.
    pub fn body(&self) -> &Value {
        &self.body
    }

    /// How a message names it: `restrictions[0] (allowed_platforms [bedrock])`.
    pub fn describe(&self, index: usize) -> String {
        let mut parts = Vec::new();
        if let Some(ps) = &self.allowed_platforms {
            let names: Vec<&str> = ps.iter().map(|p| p.as_str()).collect();
            parts.push(format!("allowed_platforms [{}]", names.join(", ")));
        }
        if let Some(ps) = &self.allowed_providers {
            let names: Vec<&str> = ps.iter().map(|p| p.as_str()).collect();
            parts.push(format!("allowed_providers [{}]", names.join(", ")));
        }
        format!("restrictions[{index}] ({})", parts.join(", "))
    }
}

/// Shown as written.
impl Serialize for Restriction {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.body.serialize(s)
    }
}

/// Read as stored (`read`: closed when it no longer validates).
impl<'de> Deserialize<'de> for Restriction {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|b| Self::read(&b, 0))
    }
}

/// Checks a written list (`restrictions`: an array, or null for none): at most
/// `MAX_RESTRICTIONS`, each valid.
pub fn validate(list: &Value) -> Result<(), ConfigError> {
    let items = match list {
        Value::Null => return Ok(()),
        Value::Array(items) => items,
        _ => return Err(ConfigError::invalid("restrictions", "must be an array")),
    };
    if items.len() > MAX_RESTRICTIONS {
        let why = format!("may hold at most {MAX_RESTRICTIONS} restrictions");
        return Err(ConfigError::invalid("restrictions", why));
    }
    for (i, b) in items.iter().enumerate() {
        Restriction::parse(b, i)?;
    }
    Ok(())
}

/// The restrictions of a stored list, each read back (`Restriction::read`).
pub fn read_all(list: Option<&Value>) -> Vec<Restriction> {
    match list {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, b)| Restriction::read(b, i))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "restriction_tests.rs"]
mod tests;
