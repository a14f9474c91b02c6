//! What a provider's kind needs beyond its base URL (Azure's API version, a cloud region, a
//! Vertex project and publisher), and the platform the provider runs on.
//!
//! The fields are checked against the kind when written: one the kind needs and lacks, or one it
//! does not take, is a 400 naming the field, never a failure at request time.

use super::provider::ProviderKind;
use super::ConfigError;
use serde::{Deserialize, Serialize};

/// Where a provider's models are served from: the vendor's own API, a cloud's, or another host.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    Direct,
    Bedrock,
    Vertex,
    Azure,
    Custom,
}

impl Platform {
    pub const ALL: [Platform; 5] = [
        Self::Direct,
        Self::Bedrock,
        Self::Vertex,
        Self::Azure,
        Self::Custom,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Bedrock => "bedrock",
            Self::Vertex => "vertex",
            Self::Azure => "azure",
            Self::Custom => "custom",
        }
    }

    /// A header's value, read case-insensitively.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(value))
    }
}

/// Whose models a Vertex provider calls: Anthropic's (the Messages shape) or Google's (Gemini's).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Publisher {
    Anthropic,
    Google,
}

/// The kind-specific fields, stored flattened in the provider's row (absent in rows of kinds
/// that take none, and in rows stored before them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cloud {
    /// Azure OpenAI's `api-version` query parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Bedrock's SigV4 region; Vertex's location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<Publisher>,
    /// The admin's override of the platform the kind and host imply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
}

/// Which field each kind requires; every other kind-specific field is refused for it.
fn required(kind: ProviderKind) -> &'static [&'static str] {
    match kind {
        ProviderKind::AzureOpenai => &["api_version"],
        ProviderKind::Bedrock => &["region"],
        ProviderKind::Vertex => &["project", "region", "publisher"],
        ProviderKind::Openai | ProviderKind::Anthropic | ProviderKind::Gemini => &[],
    }
}

impl Cloud {
    /// The fields as an admin sent them, checked against `kind`.
    pub fn validate(self, kind: ProviderKind) -> Result<Self, ConfigError> {
        let needed = required(kind);
        let given = [
            ("api_version", self.api_version.is_some()),
            ("region", self.region.is_some()),
            ("project", self.project.is_some()),
            ("publisher", self.publisher.is_some()),
        ];
        for (field, present) in given {
            match (needed.contains(&field), present) {
                (true, false) => {
                    return Err(ConfigError::invalid(
                        field,
                        format!("is required for kind '{}'", kind.as_str()),
                    ))
                }
                (false, true) => {
                    return Err(ConfigError::invalid(
                        field,
                        format!("does not apply to kind '{}'", kind.as_str()),
                    ))
                }
                _ => {}
            }
        }
        if let Some(v) = &self.api_version {
            word("api_version", v, 40)?;
        }
        if let Some(v) = &self.region {
            word("region", v, 40)?;
        }
        if let Some(v) = &self.project {
            word("project", v, 64)?;
        }
        Ok(self)
    }

    pub fn region(&self) -> &str {
        self.region.as_deref().unwrap_or_default()
    }
}

/// A value that goes into a URL path, query or signature as it is: letters, digits, `-`, `_`
/// and `.`, so it can never change which URL is called.
fn word(field: &str, value: &str, max: usize) -> Result<(), ConfigError> {
    let ok = !value.is_empty()
        && value.len() <= max
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(ConfigError::invalid(
            field,
            format!("must be 1 to {max} letters, digits, '-', '_' or '.'"),
        ))
    }
}

/// The platform a provider runs on: its override, else what its kind says, else (for the two
/// vendor kinds) `direct` on the vendor's own host and `custom` anywhere else.
pub fn platform_of(kind: ProviderKind, cloud: &Cloud, base_url: &str) -> Platform {
    if let Some(p) = cloud.platform {
        return p;
    }
    let vendor_host = match kind {
        ProviderKind::AzureOpenai => return Platform::Azure,
        ProviderKind::Bedrock => return Platform::Bedrock,
        ProviderKind::Vertex => return Platform::Vertex,
        ProviderKind::Gemini => return Platform::Direct,
        ProviderKind::Openai => "api.openai.com",
        ProviderKind::Anthropic => "api.anthropic.com",
    };
    let host = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest)
        .split(['/', ':'])
        .next()
        .unwrap_or_default();
    if host == vendor_host {
        Platform::Direct
    } else {
        Platform::Custom
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_requires_its_own_fields_and_refuses_the_others() {
        let e = Cloud::default()
            .validate(ProviderKind::AzureOpenai)
            .unwrap_err();
        assert_eq!(e.field(), Some("api_version"));
        let e = Cloud::default()
            .validate(ProviderKind::Bedrock)
            .unwrap_err();
        assert_eq!(e.field(), Some("region"));
        let vertex = Cloud {
            project: Some("p".into()),
            region: Some("us-east5".into()),
            ..Cloud::default()
        };
        let e = vertex.clone().validate(ProviderKind::Vertex).unwrap_err();
        assert_eq!(e.field(), Some("publisher"));
        let e = vertex.validate(ProviderKind::Openai).unwrap_err();
        assert_eq!(e.field(), Some("region"));
        assert!(Cloud::default().validate(ProviderKind::Gemini).is_ok());
    }

    #[test]
    fn a_field_that_could_change_the_url_is_refused() {
        for bad in ["", "us east", "eu/west", "a?b", "x%2F"] {
            let c = Cloud {
                region: Some(bad.into()),
                ..Cloud::default()
            };
            assert_eq!(
                c.validate(ProviderKind::Bedrock).unwrap_err().field(),
                Some("region"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_vendor_kinds_are_direct_on_the_vendors_host_and_custom_elsewhere() {
        let none = Cloud::default();
        let cases = [
            (
                ProviderKind::Openai,
                "https://api.openai.com/v1",
                Platform::Direct,
            ),
            (
                ProviderKind::Anthropic,
                "https://api.anthropic.com/v1",
                Platform::Direct,
            ),
            (
                ProviderKind::Openai,
                "https://api.groq.com/openai/v1",
                Platform::Custom,
            ),
            (
                ProviderKind::Openai,
                "http://127.0.0.1:8000/v1",
                Platform::Custom,
            ),
            (
                ProviderKind::Bedrock,
                "https://x.example",
                Platform::Bedrock,
            ),
            (ProviderKind::Gemini, "https://x.example", Platform::Direct),
        ];
        for (kind, url, platform) in cases {
            assert_eq!(platform_of(kind, &none, url), platform, "{url}");
        }
    }

    #[test]
    fn the_platform_override_wins() {
        let c = Cloud {
            platform: Some(Platform::Azure),
            ..Cloud::default()
        };
        assert_eq!(
            platform_of(ProviderKind::Openai, &c, "https://api.openai.com/v1"),
            Platform::Azure
        );
        assert_eq!(Platform::parse("VERTEX"), Some(Platform::Vertex));
        assert_eq!(Platform::parse("gcp"), None);
    }
}
