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

/// A restriction as written and shown.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    body: RestrictionBody,
}

impl Restriction {
    /// Checks `body`, the restriction at `restrictions[index]`; errors name their path there.
    pub fn parse(body: RestrictionBody, index: usize) -> Result<Self, ConfigError> {
        let at = format!("restrictions[{index}]");
        let nested = |e: ConfigError| match e {
            ConfigError::Invalid { field, reason } => ConfigError::Invalid {
                field: format!("{at}.{field}"),
                reason,
            },
            other => other,
        };
        let when = When::parse(body.when.clone()).map_err(nested)?;
        if body.allowed_platforms.is_none() && body.allowed_providers.is_none() {
            let why = "must list allowed_platforms or allowed_providers";
            return Err(ConfigError::invalid(&at, why));
        }
        let empty = |field: &str| {
            let why = "must list at least one (a request it matches could go nowhere)";
            ConfigError::invalid(&format!("{at}.{field}"), why)
        };
        if body.allowed_platforms.as_ref().is_some_and(Vec::is_empty) {
            return Err(empty("allowed_platforms"));
        }
        if body.allowed_providers.as_ref().is_some_and(Vec::is_empty) {
            return Err(empty("allowed_providers"));
        }
        Ok(Self {
            when: Some(when),
            allowed_platforms: body.allowed_platforms.clone(),
            allowed_providers: body.allowed_providers.clone(),
            body,
        })
    }

    /// A stored restriction read back: one that no longer validates applies to every request and
    /// allows nothing (closed, never open).
    pub fn read(body: &RestrictionBody, index: usize) -> Self {
        Self::parse(body.clone(), index).unwrap_or_else(|_| Self {
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

    pub fn body(&self) -> &RestrictionBody {
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
        RestrictionBody::deserialize(d).map(|b| Self::read(&b, 0))
    }
}

/// Checks a written list: at most `MAX_RESTRICTIONS`, each valid.
pub fn validate(bodies: &[RestrictionBody]) -> Result<(), ConfigError> {
    if bodies.len() > MAX_RESTRICTIONS {
        let why = format!("may hold at most {MAX_RESTRICTIONS} restrictions");
        return Err(ConfigError::invalid("restrictions", why));
    }
    for (i, b) in bodies.iter().enumerate() {
        Restriction::parse(b.clone(), i)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "restriction_tests.rs"]
mod tests;
