//! Where one upstream call goes: the path each kind appends to its provider's `base_url`.

use super::dialect::Dialect;
use super::{bedrock, gemini};
use crate::config::{Provider, ProviderKey, ProviderKind};

/// What a call asks of the upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Chat { stream: bool },
    Embeddings,
}

/// Vertex's `publisher` API version and Anthropic's version in a Vertex body.
pub const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// The path after `base_url` (no leading slash). A model name goes in as one percent-encoded
/// segment, so no name can reach another path or add a query.
pub fn path(provider: &Provider, key: &ProviderKey, model: &str, op: Operation) -> String {
    let m = encode(model, false);
    let stream = matches!(op, Operation::Chat { stream: true });
    match provider.kind {
        ProviderKind::Openai => match op {
            Operation::Chat { .. } => "chat/completions".to_owned(),
            Operation::Embeddings => "embeddings".to_owned(),
        },
        ProviderKind::Anthropic => "messages".to_owned(),
        ProviderKind::AzureOpenai => {
            let what = match op {
                Operation::Chat { .. } => "chat/completions",
                Operation::Embeddings => "embeddings",
            };
            let version = provider.cloud.api_version.as_deref().unwrap_or_default();
            format!("openai/deployments/{m}/{what}?api-version={version}")
        }
        ProviderKind::Gemini => gemini_method(model, op),
        ProviderKind::Bedrock => bedrock::path(model, stream),
        ProviderKind::Vertex => {
            let c = &provider.cloud;
            let publisher = match Dialect::of(provider) {
                Dialect::Gemini => "google",
                _ => "anthropic",
            };
            // A key that is not a service-account file is an express-mode API key: Google's
            // models only, with no project or location in the path.
            let base = if is_service_account(key) {
                let (project, region) = (c.project.as_deref(), c.region.as_deref());
                format!(
                    "v1/projects/{}/locations/{}/publishers/{publisher}/",
                    project.unwrap_or_default(),
                    region.unwrap_or_default()
                )
            } else {
                format!("v1/publishers/{publisher}/")
            };
            match publisher {
                "google" => base + &gemini_method(model, op),
                _ if stream => format!("{base}models/{m}:streamRawPredict"),
                _ => format!("{base}models/{m}:rawPredict"),
            }
        }
    }
}

/// A Vertex key is a service-account file (JSON) or an API key.
pub fn is_service_account(key: &ProviderKey) -> bool {
    key.secret.expose().trim_start().starts_with('{')
}

/// `models/{m}:{method}` of Google's `generateContent` family.
fn gemini_method(model: &str, op: Operation) -> String {
    match op {
        Operation::Chat { stream } => gemini::path(model, stream),
        Operation::Embeddings => gemini::embeddings::path(model),
    }
}

/// RFC 3986 percent-encoding: unreserved characters (`A-Za-z0-9-._~`) are kept, and `/` too when
/// `keep_slash`; every other byte becomes `%XX` (upper-case hex).
pub fn encode(s: &str, keep_slash: bool) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
    out
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
