//! A `Token` key's access token (a Vertex service account's), by the rules of
//! `providers::google_token`, over the port that signs and posts: the isolate's token while it is
//! fresh, else an assertion signed and exchanged once.
//!
//! A token that cannot be had is the key's `auth` failure, answered as a 401 would be, so the
//! cascade rotates past the key as it does past a refused one. An endpoint that does not answer
//! in time, or at all, is the call's timeout or network failure: the key is not to blame.

use crate::cascade::{Call, UpstreamReply};
use crate::providers::credentials::{key_use, KeyUse};
use crate::providers::google_token::{read_token, Assertion, TokenCache, TokenError};
use std::cell::RefCell;

/// How a form POST to the token endpoint ended.
pub enum Posted {
    Answered { status: u16, body: Vec<u8> },
    Failed(String),
    TimedOut,
}

/// What the edge does for a token: WebCrypto's signature and a `fetch`.
#[allow(async_fn_in_trait)]
pub trait TokenEndpoint {
    /// RSASSA-PKCS1-v1_5 with SHA-256 over `data`, with the PKCS#8 key `der`; `None` when the
    /// runtime refuses the key.
    async fn sign(&self, der: &[u8], data: &[u8]) -> Option<Vec<u8>>;
    /// `form` POSTed to `url` as `application/x-www-form-urlencoded` within `timeout_ms`, with
    /// redirects not followed (the assertion would go along) and the body read up to a bound.
    async fn post_form(&self, url: &str, form: String, timeout_ms: u64) -> Posted;
}

/// The access token `call`'s key needs, if it needs one (`KeyUse::Token`), by `access_token`.
pub async fn token_for<B>(
    endpoint: &impl TokenEndpoint,
    cache: &RefCell<TokenCache>,
    call: &Call<'_>,
    now_ms: impl Fn() -> u64,
) -> Result<Option<String>, UpstreamReply<B>> {
    match key_use(call.provider, call.key) {
        KeyUse::Token => {
            let secret = call.key.secret.expose();
            access_token(endpoint, cache, secret, call.timeout_ms, now_ms)
                .await
                .map(Some)
        }
        KeyUse::Header | KeyUse::Signature => Ok(None),
    }
}

/// The access token for the service-account file `secret`: `cache`'s while fresh, else a fresh
/// exchange within `timeout_ms`, kept in `cache`. `now_ms` is read before and after the exchange.
pub async fn access_token<B>(
    endpoint: &impl TokenEndpoint,
    cache: &RefCell<TokenCache>,
    secret: &str,
    timeout_ms: u64,
    now_ms: impl Fn() -> u64,
) -> Result<String, UpstreamReply<B>> {
    let now = now_ms();
    if let Some(token) = cache.borrow().fresh(secret, now) {
        return Ok(token);
    }
    let refused = |e: TokenError| UpstreamReply::Status {
        status: 401,
        retry_after: None,
        headers: Vec::new(),
        text: format!("access token: {e}"),
    };
    let assertion = Assertion::of(secret, now / 1000).map_err(refused)?;
    let signature = endpoint
        .sign(&assertion.der, assertion.signing_input.as_bytes())
        .await
        .ok_or_else(|| refused(TokenError::Signing))?;
    let form = assertion.form(&signature);
    let (status, body) = match endpoint
        .post_form(&assertion.token_uri, form, timeout_ms)
        .await
    {
        Posted::Answered { status, body } => (status, body),
        Posted::Failed(e) => return Err(UpstreamReply::Network(format!("token endpoint: {e}"))),
        Posted::TimedOut => return Err(UpstreamReply::Timeout),
    };
    let now = now_ms();
    let token = read_token(status, &body, now).map_err(refused)?;
    let access = token.access_token.clone();
    cache.borrow_mut().keep(secret, token, now);
    Ok(access)
}

#[cfg(test)]
#[path = "access_token_tests.rs"]
mod tests;
