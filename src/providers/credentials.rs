//! How a key goes with a call, by kind: a header as it is, a bearer token the edge obtained for
//! it (a Vertex service account's), or a signature over the request (Bedrock's SigV4).

use super::address::is_service_account;
use super::{anthropic, bedrock};
use crate::config::{Provider, ProviderKey, ProviderKind};

/// What a call's credentials need before its headers can be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyUse {
    /// The key goes in a header as it is.
    Header,
    /// An access token exchanged for the key (a Vertex service account), cached by the edge.
    Token,
    /// A SigV4 signature over the whole request (a Bedrock access key pair).
    Signature,
}

pub fn key_use(provider: &Provider, key: &ProviderKey) -> KeyUse {
    match provider.kind {
        ProviderKind::Vertex if is_service_account(key) => KeyUse::Token,
        ProviderKind::Bedrock if key.secret.expose().contains(':') => KeyUse::Signature,
        _ => KeyUse::Header,
    }
}

/// The credential headers of a `Header` key, or of a `Token` key given its `token`; none for
/// a `Signature` key, which the signer adds.
pub fn key_headers(
    provider: &Provider,
    key: &ProviderKey,
    token: Option<&str>,
) -> Vec<(&'static str, String)> {
    let secret = key.secret.expose();
    match (provider.kind, key_use(provider, key)) {
        (_, KeyUse::Signature) => Vec::new(),
        (_, KeyUse::Token) => vec![(
            "authorization",
            format!("Bearer {}", token.unwrap_or_default()),
        )],
        (ProviderKind::Openai, _) => vec![("authorization", format!("Bearer {secret}"))],
        (ProviderKind::Anthropic, _) => vec![
            ("x-api-key", secret.to_owned()),
            ("anthropic-version", anthropic::API_VERSION.to_owned()),
        ],
        (ProviderKind::AzureOpenai, _) => vec![("api-key", secret.to_owned())],
        (ProviderKind::Gemini | ProviderKind::Vertex, _) => {
            vec![("x-goog-api-key", secret.to_owned())]
        }
        (ProviderKind::Bedrock, _) => vec![("authorization", format!("Bearer {secret}"))],
    }
}

/// A `Signature` key's headers for the call to `url` with `body` at `now_ms`: SigV4 for
/// Bedrock's service in the provider's region, over the host and path exactly as sent.
pub fn signature_headers(
    provider: &Provider,
    key: &ProviderKey,
    url: &str,
    body: &[u8],
    now_ms: u64,
) -> Vec<(&'static str, String)> {
    let Ok(parsed) = bedrock::BedrockKey::parse(key.secret.expose()) else {
        return Vec::new();
    };
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    bedrock::sigv4::sign(
        parsed,
        provider.cloud.region(),
        bedrock::SERVICE,
        authority,
        path,
        query,
        body,
        bedrock::CONTENT_TYPE,
        now_ms,
    )
}
