//! The key forms of the cloud kinds, checked when written: a Bedrock access key pair, a Vertex
//! service-account file. A malformed one is a 400 naming the field, never a failure at request
//! time; and each is shown by who it is (an access key id, an account's email), never by any
//! part of its secret.

use super::provider::ProviderKind;
use super::provider_key::ProviderKey;
use super::ConfigError;
use serde::Deserialize;

/// Most keys are short tokens; a Bedrock key may carry an STS session token, and a Vertex key
/// is a service-account file (about 2.4 KB, indented).
fn max_chars(kind: ProviderKind) -> usize {
    match kind {
        ProviderKind::Vertex => 8 * 1024,
        ProviderKind::Bedrock => 4 * 1024,
        _ => 1024,
    }
}

/// The parts of a service-account key file the gateway uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ServiceAccount {
    pub client_email: String,
    pub private_key: String,
    pub token_uri: String,
}

impl ServiceAccount {
    /// A key that starts with `{` is a service-account file; `None` for any other key (a Vertex
    /// API key, express mode).
    pub fn of(secret: &str) -> Option<Result<Self, (&'static str, &'static str)>> {
        secret
            .trim_start()
            .starts_with('{')
            .then(|| Self::parse(secret))
    }

    fn parse(secret: &str) -> Result<Self, (&'static str, &'static str)> {
        #[derive(Deserialize)]
        struct File {
            client_email: Option<String>,
            private_key: Option<String>,
            token_uri: Option<String>,
        }
        let f: File = serde_json::from_str(secret).map_err(|_| {
            (
                "",
                "a key that starts with '{' must be a service-account JSON file",
            )
        })?;
        let present = |v: Option<String>, field| {
            v.filter(|s| !s.trim().is_empty())
                .ok_or((field, "is required in a service-account key"))
        };
        let account = Self {
            client_email: present(f.client_email, "client_email")?,
            private_key: present(f.private_key, "private_key")?,
            token_uri: present(f.token_uri, "token_uri")?,
        };
        if pkcs8_der(&account.private_key).is_none() {
            return Err(("private_key", "must be a PKCS#8 PEM private key"));
        }
        if !(account.token_uri.starts_with("https://") || account.token_uri.starts_with("http://"))
        {
            return Err(("token_uri", "must be an http(s) URL"));
        }
        Ok(account)
    }
}

/// The DER bytes of a PKCS#8 PEM key (`-----BEGIN PRIVATE KEY-----`), `None` when it is not one.
pub fn pkcs8_der(pem: &str) -> Option<Vec<u8>> {
    let body = pem
        .trim()
        .strip_prefix("-----BEGIN PRIVATE KEY-----")?
        .strip_suffix("-----END PRIVATE KEY-----")?;
    let b64: Vec<u8> = body.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let der = super::base64::decode(&b64)?;
    // A DER SEQUENCE, as every PKCS#8 PrivateKeyInfo is.
    (der.first() == Some(&0x30) && der.len() > 64).then_some(der)
}

/// Whether an opened key can be used under this deployment: a Vertex service account (literal,
/// or a Worker secret no write could check) must be one, and its `token_uri` https unless the
/// deployment allows http upstreams, or the key is left out when the config loads.
pub fn usable_at_load(kind: ProviderKind, secret: &str, allow_http: bool) -> Result<(), String> {
    if kind != ProviderKind::Vertex {
        return Ok(());
    }
    match ServiceAccount::of(secret) {
        Some(Err((part, why))) => Err(format!("service account {part}: {why}")),
        Some(Ok(a)) if !a.token_uri.starts_with("https://") && !allow_http => Err(
            "its token_uri is plain http, which the deployment refuses (ALLOW_HTTP_UPSTREAMS)"
                .to_owned(),
        ),
        _ => Ok(()),
    }
}

/// A Bedrock access key: its id, its secret and the session token, if any.
pub type AccessKey<'a> = (&'a str, &'a str, Option<&'a str>);

/// Splits a Bedrock key: `access_key_id:secret_access_key[:session_token]`; `None` for a key
/// without `:` (a Bedrock API key, sent as a bearer token).
pub fn access_key_pair(secret: &str) -> Option<Result<AccessKey<'_>, &'static str>> {
    if !secret.contains(':') {
        return None;
    }
    let mut parts = secret.splitn(3, ':');
    let (id, key, token) = (parts.next(), parts.next(), parts.next());
    Some(match (id, key, token) {
        (Some(id), Some(key), token)
            if !id.is_empty() && !key.is_empty() && token.is_none_or(|t| !t.is_empty()) =>
        {
            Ok((id, key, token))
        }
        _ => Err("a Bedrock key is access_key_id:secret_access_key[:session_token], no part empty"),
    })
}

/// Who a key is, for the admin views: a Bedrock access key id, a service account's email.
pub fn account_of(kind: ProviderKind, secret: &str) -> Option<String> {
    match kind {
        ProviderKind::Bedrock => access_key_pair(secret)?.ok().map(|(id, ..)| id.to_owned()),
        ProviderKind::Vertex => ServiceAccount::of(secret)?.ok().map(|a| a.client_email),
        _ => None,
    }
}

impl ProviderKey {
    /// A key given for a provider of `kind` (the `i`th of its list), checked as that kind takes
    /// it.
    pub fn of_kind(kind: ProviderKind, i: usize, secret: String) -> Result<Self, ConfigError> {
        let max = max_chars(kind);
        if max > 1024 && (secret.is_empty() || secret.chars().count() > max) {
            return Err(ConfigError::invalid(
                "keys",
                format!("each key must be 1 to {max} characters"),
            ));
        }
        match kind {
            ProviderKind::Vertex => match ServiceAccount::of(&secret) {
                Some(Err(("", why))) => return Err(ConfigError::invalid("keys", why)),
                Some(Err((part, why))) => {
                    return Err(ConfigError::invalid(&format!("keys[{i}].{part}"), why))
                }
                // A service-account file is indented JSON: its whitespace is its own.
                Some(Ok(_)) => return Ok(Self::derived(secret)),
                None => {}
            },
            ProviderKind::Bedrock => {
                if let Some(Err(why)) = access_key_pair(&secret) {
                    return Err(ConfigError::invalid("keys", why));
                }
            }
            _ => {}
        }
        Self::checked(secret, max)
    }
}

#[cfg(test)]
#[path = "cloud_key_tests.rs"]
pub(crate) mod tests;
