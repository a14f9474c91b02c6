//! A Vertex service account's access token. The gateway signs an RS256 JSON Web Token with the
//! account's key (the edge signs with WebCrypto; everything else is here), exchanges it at the
//! account's `token_uri` with the JWT-bearer grant, and keeps the token per isolate until five
//! minutes before it expires.
//!
//! Rules:
//! - `iss` is the account's `client_email`, `aud` its `token_uri`, the scope Google Cloud's.
//! - A `token_uri` over plain http is used only where the deployment allows http upstreams:
//!   `config::cloud_key::usable_at_load` leaves any other such key out of the loaded config.
//! - A token is given only to a holder of the same service-account file: the cache is keyed by a
//!   digest of the whole file, so two tenants share a token only if they hold the same account.
//! - A failed exchange names the token endpoint's error code, never a key or a token.

use crate::config::base64::encode_url;
use crate::config::cloud_key::{pkcs8_der, ServiceAccount};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::fmt;

/// The scope every Vertex call needs.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// `urn:ietf:params:oauth:grant-type:jwt-bearer`, form-encoded.
const GRANT_TYPE: &str = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer";
/// How long a signed assertion is valid for: Google's maximum.
const ASSERTION_LIFETIME_S: u64 = 3600;
/// A token is used until this long before it expires, so none expires on its way upstream.
pub const REFRESH_BEFORE_MS: u64 = 5 * 60 * 1000;
/// Tokens one isolate keeps: past it, the one that expires first goes.
const MAX_TOKENS: usize = 64;

/// Why no token could be had for a key: each is an `auth` failure of that key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenError {
    /// The key is no service-account file the gateway can sign with.
    NotAnAccount,
    /// The token endpoint refused the assertion: its status and error code.
    Refused { status: u16, error: String },
    /// A 2xx that holds no usable token.
    Malformed,
    /// WebCrypto could not sign with the key.
    Signing,
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnAccount => f.write_str("the key is not a usable service-account file"),
            Self::Refused { status, error } => {
                write!(f, "the token endpoint answered {status} ({error})")
            }
            Self::Malformed => f.write_str("the token endpoint's answer holds no access token"),
            Self::Signing => f.write_str("the service-account key could not sign"),
        }
    }
}

/// A JSON Web Token to sign and where to exchange it.
pub struct Assertion {
    pub token_uri: String,
    /// The account's private key, PKCS#8 DER, for WebCrypto's `importKey`.
    pub der: Vec<u8>,
    /// `base64url(header).base64url(claims)`: the bytes RS256 signs.
    pub signing_input: String,
}

impl Assertion {
    /// The assertion for the service-account file `secret` at `now_s`.
    pub fn of(secret: &str, now_s: u64) -> Result<Self, TokenError> {
        let account = ServiceAccount::of(secret)
            .and_then(Result::ok)
            .ok_or(TokenError::NotAnAccount)?;
        let der = pkcs8_der(&account.private_key).ok_or(TokenError::NotAnAccount)?;
        let claims = serde_json::json!({
            "iss": account.client_email,
            "scope": SCOPE,
            "aud": account.token_uri,
            "iat": now_s,
            "exp": now_s + ASSERTION_LIFETIME_S,
        });
        let signing_input = format!(
            "{}.{}",
            encode_url(br#"{"alg":"RS256","typ":"JWT"}"#),
            encode_url(claims.to_string().as_bytes())
        );
        Ok(Self {
            token_uri: account.token_uri,
            der,
            signing_input,
        })
    }

    /// The exchange's form body, given the RS256 signature over `signing_input`.
    pub fn form(&self, signature: &[u8]) -> String {
        format!(
            "grant_type={GRANT_TYPE}&assertion={}.{}",
            self.signing_input,
            encode_url(signature)
        )
    }
}

/// An access token and when it expires (epoch ms). `Debug` is left out: it is a credential.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    pub access_token: String,
    pub expires_at_ms: u64,
}

/// The token endpoint's answer, read at `now_ms`.
pub fn read_token(status: u16, body: &[u8], now_ms: u64) -> Result<Token, TokenError> {
    #[derive(Deserialize)]
    struct Answer {
        access_token: Option<String>,
        expires_in: Option<u64>,
        error: Option<String>,
    }
    let answer: Option<Answer> = serde_json::from_slice(body).ok();
    if !(200..300).contains(&status) {
        let error = answer.and_then(|a| a.error).unwrap_or_default();
        // The code is a short word (`invalid_grant`); anything else is not repeated.
        let error = if !error.is_empty()
            && error.len() <= 64
            && error
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            error
        } else {
            "no error code".to_owned()
        };
        return Err(TokenError::Refused { status, error });
    }
    match answer {
        Some(Answer {
            access_token: Some(access_token),
            expires_in: Some(expires_in),
            ..
        }) if !access_token.is_empty() && expires_in > 0 => Ok(Token {
            access_token,
            expires_at_ms: now_ms.saturating_add(expires_in.saturating_mul(1000)),
        }),
        _ => Err(TokenError::Malformed),
    }
}

/// The tokens of one isolate, by a digest of the service-account file each was exchanged for.
#[derive(Default)]
pub struct TokenCache {
    entries: Vec<([u8; 32], Token)>,
}

impl TokenCache {
    /// The token for `secret` while it has more than five minutes left.
    pub fn fresh(&self, secret: &str, now_ms: u64) -> Option<String> {
        let id = digest(secret);
        self.entries
            .iter()
            .find(|(d, t)| *d == id && usable(t, now_ms))
            .map(|(_, t)| t.access_token.clone())
    }

    /// Keeps `token` for `secret`, in place of any older one; stale tokens go, and past
    /// `MAX_TOKENS` the one that expires first.
    pub fn keep(&mut self, secret: &str, token: Token, now_ms: u64) {
        let id = digest(secret);
        self.entries.retain(|(d, t)| *d != id && usable(t, now_ms));
        if self.entries.len() >= MAX_TOKENS {
            if let Some(i) =
                (0..self.entries.len()).min_by_key(|&i| self.entries[i].1.expires_at_ms)
            {
                self.entries.swap_remove(i);
            }
        }
        if usable(&token, now_ms) {
            self.entries.push((id, token));
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn usable(token: &Token, now_ms: u64) -> bool {
    now_ms.saturating_add(REFRESH_BEFORE_MS) < token.expires_at_ms
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

#[cfg(test)]
#[path = "google_token_tests.rs"]
mod tests;
