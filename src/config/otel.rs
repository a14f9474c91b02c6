//! `otel`: where a tenant's traces go (an OTLP/HTTP receiver), how, and how many. Header values
//! are credentials: a literal one is sealed under `CG_KEK` when written (`seal_otel_header`), a
//! `{"secret": "NAME"}` one names a Worker secret under the provider keys' naming rule, and
//! neither is ever shown: the settings GET lists each header's name and kind only.

use super::alerts::{post_url, reach};
use super::provider_key::NewKey;
use super::sealed::Kek;
use super::{ConfigError, SortedMap, TenantId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Headers a tenant may set on its export, at most.
pub const MAX_HEADERS: usize = 16;
/// The longest header value, in bytes.
pub const MAX_HEADER_VALUE: usize = 4_096;

/// How spans are written: OTLP's JSON mapping (the default) or its protobuf.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum OtelProtocol {
    #[default]
    #[serde(rename = "http/json")]
    HttpJson,
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
}

impl OtelProtocol {
    pub fn content_type(self) -> &'static str {
        match self {
            Self::HttpJson => "application/json",
            Self::HttpProtobuf => "application/x-protobuf",
        }
    }
}

/// One header's value: as written (a literal or a secret's name), or as stored (sealed). Read
/// and written by hand (`header_value`): a derived untagged reader costs the module far more.
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(schemars::JsonSchema),
    schemars(untagged)
)]
#[derive(Clone, PartialEq, Eq)]
pub enum OtelHeader {
    /// A value as a PUT carries it; sealed before it is stored.
    Literal(String),
    /// A Worker secret by name.
    Secret { secret: String },
    /// A literal value as stored: never read from a request body.
    #[cfg_attr(not(target_arch = "wasm32"), schemars(skip))]
    Sealed { sealed: String },
}

impl Serialize for OtelHeader {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (key, value) = match self {
            Self::Literal(v) => return s.serialize_str(v),
            Self::Secret { secret } => ("secret", secret),
            Self::Sealed { sealed } => ("sealed", sealed),
        };
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(key, value)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for OtelHeader {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        header_value(serde_json::Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// A header value as JSON: a string, `{"secret": "NAME"}` or (stored) `{"sealed": "v1:…"}`.
fn header_value(v: serde_json::Value) -> Result<OtelHeader, &'static str> {
    use serde_json::Value::{Object, String as Text};
    match v {
        Text(s) => Ok(OtelHeader::Literal(s)),
        Object(m) if m.len() == 1 => match m.into_iter().next() {
            Some((k, Text(secret))) if k == "secret" => Ok(OtelHeader::Secret { secret }),
            Some((k, Text(sealed))) if k == "sealed" => Ok(OtelHeader::Sealed { sealed }),
            _ => Err("a header value is a string or {\"secret\": \"NAME\"}"),
        },
        _ => Err("a header value is a string or {\"secret\": \"NAME\"}"),
    }
}

impl fmt::Debug for OtelHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Secret { secret } => write!(f, "Secret({secret})"),
            _ => f.write_str("<value>"),
        }
    }
}

const ENDPOINT: &str = "otel.endpoint";

/// The receiver's URL, under the webhooks' rules (`alerts::reach`).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OtelEndpoint(String);

impl OtelEndpoint {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn check_reach(&self, allow_local: bool) -> Result<(), ConfigError> {
        reach(ENDPOINT, &self.0, allow_local)
    }
}

impl TryFrom<String> for OtelEndpoint {
    type Error = ConfigError;
    fn try_from(s: String) -> Result<Self, ConfigError> {
        post_url(&s, ENDPOINT).map(Self)
    }
}

impl From<OtelEndpoint> for String {
    fn from(u: OtelEndpoint) -> Self {
        u.0
    }
}

fn one() -> f64 {
    1.0
}

fn is_one(v: &f64) -> bool {
    *v == 1.0
}

/// `otel` as written and stored.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtelSettings {
    /// The receiver's traces URL (`https://collector.example/v1/traces`).
    pub endpoint: OtelEndpoint,
    #[serde(default)]
    pub protocol: OtelProtocol,
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub headers: SortedMap<String, OtelHeader>,
    /// The share of traces without a caller's parent that are exported (0 to 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub sample_ratio: f64,
    /// Prompt and completion text on the attempt span; off unless `true`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capture_content: bool,
}

/// How the settings GET shows a header: its secret's name, or only that a value is sealed.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum OtelHeaderShown {
    Secret { secret: String },
    Sealed { sealed: bool },
}

/// `otel` as the settings GET shows it: no header value (never read back).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OtelShown {
    pub endpoint: String,
    pub protocol: OtelProtocol,
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub headers: SortedMap<String, OtelHeaderShown>,
    pub sample_ratio: f64,
    pub capture_content: bool,
}

/// What the export runs with: the headers opened. Built with the tenant's config, so the request
/// path never opens a value.
#[derive(Clone, PartialEq)]
pub struct OtelExport {
    pub endpoint: String,
    pub protocol: OtelProtocol,
    pub headers: Vec<(String, String)>,
    pub sample_ratio: f64,
    pub capture_content: bool,
}

impl fmt::Debug for OtelExport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("OtelExport")
            .field("endpoint", &self.endpoint)
            .field("protocol", &self.protocol)
            .field("headers", &names)
            .field("sample_ratio", &self.sample_ratio)
            .finish()
    }
}

fn reason(e: &ConfigError) -> String {
    match e {
        ConfigError::Invalid { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

/// A header name as HTTP allows it (a token), not one the export sets itself.
fn valid_name(name: &str) -> bool {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let own = [
        "content-type",
        "content-length",
        "host",
        "traceparent",
        "tracestate",
    ];
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(token)
        && !own.contains(&name.to_ascii_lowercase().as_str())
}

impl OtelSettings {
    /// The rules a body must keep, each refusal naming its field. A sealed value is refused:
    /// only the gateway writes one.
    pub fn validate(&self, allow_local: bool) -> Result<(), ConfigError> {
        self.endpoint.check_reach(allow_local)?;
        if !(0.0..=1.0).contains(&self.sample_ratio) {
            return Err(ConfigError::invalid("otel.sample_ratio", "must be 0 to 1"));
        }
        if self.headers.len() > MAX_HEADERS {
            return Err(ConfigError::invalid(
                "otel.headers",
                format!("at most {MAX_HEADERS} headers"),
            ));
        }
        for (name, value) in self.headers.iter() {
            let field = format!("otel.headers.{name}");
            if !valid_name(name) {
                return Err(ConfigError::invalid(
                    &field,
                    "is not a header name the export may set",
                ));
            }
            match value {
                OtelHeader::Literal(v) => {
                    let printable = v.chars().all(|c| c == '\t' || !c.is_control());
                    if v.is_empty() || v.len() > MAX_HEADER_VALUE || !printable {
                        return Err(ConfigError::invalid(
                            &field,
                            format!("must be 1 to {MAX_HEADER_VALUE} printable bytes"),
                        ));
                    }
                }
                OtelHeader::Secret { secret } => {
                    NewKey::secret(secret.clone())
                        .map_err(|e| ConfigError::invalid(&field, reason(&e)))?;
                }
                OtelHeader::Sealed { .. } => {
                    return Err(ConfigError::invalid(
                        &field,
                        "is a string or {\"secret\": \"NAME\"}",
                    ))
                }
            }
        }
        Ok(())
    }

    /// The literal values a write carries: each needs a fresh nonce to be sealed.
    pub fn literals(&self) -> usize {
        let literal = |v: &&OtelHeader| matches!(v, OtelHeader::Literal(_));
        self.headers.values().filter(literal).count()
    }

    /// The settings as stored: every literal value sealed, each under one of `nonces` (drawn from
    /// the runtime's CSPRNG, one per literal).
    pub fn sealed(
        mut self,
        kek: Option<&Kek>,
        tenant: &TenantId,
        mut nonces: Vec<[u8; 12]>,
    ) -> Result<Self, ConfigError> {
        for (name, value) in self.headers.iter_mut() {
            if let OtelHeader::Literal(plain) = value {
                let kek = kek.ok_or_else(|| {
                    ConfigError::invalid(
                        &format!("otel.headers.{name}"),
                        "needs the deployment secret CG_KEK to seal a literal value",
                    )
                })?;
                let nonce = nonces
                    .pop()
                    .ok_or_else(|| ConfigError::invalid("otel.headers", "could not be sealed"))?;
                let sealed = kek.seal_otel_header(tenant, name, plain, nonce)?;
                *value = OtelHeader::Sealed { sealed };
            }
        }
        Ok(self)
    }

    pub fn shown(&self) -> OtelShown {
        let headers = self
            .headers
            .iter()
            .map(|(name, value)| {
                let shown = match value {
                    OtelHeader::Secret { secret } => OtelHeaderShown::Secret {
                        secret: secret.clone(),
                    },
                    _ => OtelHeaderShown::Sealed { sealed: true },
                };
                (name.clone(), shown)
            })
            .collect();
        OtelShown {
            endpoint: self.endpoint.as_str().to_owned(),
            protocol: self.protocol,
            headers,
            sample_ratio: self.sample_ratio,
            capture_content: self.capture_content,
        }
    }

    /// The export as it runs, or why it cannot: an endpoint the deployment does not allow now,
    /// a value that cannot be opened, a secret that is not set. An export missing a header would
    /// be refused by its receiver, so any problem leaves the whole export out.
    pub fn open(
        &self,
        tenant: &TenantId,
        kek: Option<&Kek>,
        allow_local: bool,
        secret: &dyn Fn(&str) -> Option<String>,
    ) -> Result<OtelExport, String> {
        self.endpoint
            .check_reach(allow_local)
            .map_err(|e| e.to_string())?;
        let mut headers = Vec::with_capacity(self.headers.len());
        for (name, value) in self.headers.iter() {
            let opened = match value {
                OtelHeader::Sealed { sealed } => kek
                    .ok_or("CG_KEK is not set")?
                    .open_otel_header(tenant, name, sealed)
                    .map_err(|e| format!("header {name}: {e:?}"))?,
                OtelHeader::Secret { secret: s } => {
                    secret(s).ok_or_else(|| format!("header {name}: secret {s} is not set"))?
                }
                OtelHeader::Literal(_) => return Err(format!("header {name} was never sealed")),
            };
            headers.push((name.clone(), opened));
        }
        Ok(OtelExport {
            endpoint: self.endpoint.as_str().to_owned(),
            protocol: self.protocol,
            headers,
            sample_ratio: self.sample_ratio,
            capture_content: self.capture_content,
        })
    }
}

#[cfg(test)]
#[path = "otel_tests.rs"]
mod tests;
