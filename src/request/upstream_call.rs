//! What one upstream call sends besides its body: the URL and every header, the key's included.
//! Only the provider's key and the gateway's own headers go upstream; the caller's credentials,
//! cookies and hop-by-hop headers never leave the gateway.

use crate::cascade::Call;
use crate::providers::credentials::{self, KeyUse};
use crate::providers::{self, Dialect};
use crate::surfaces::Inbound;

/// The URL and headers of `call` for `inbound`, sending `body` at `now_ms` (a signature covers
/// both); `token` is the access token a `Token` key was exchanged for.
pub fn outgoing(
    inbound: &Inbound,
    call: &Call<'_>,
    body: &[u8],
    (now_ms, token): (u64, Option<&str>),
) -> (String, Vec<(&'static str, String)>) {
    let path = inbound.path(call.provider, call.key, call.model);
    let mut headers: Vec<(&'static str, String)> = providers::content_headers(inbound.chat())
        .iter()
        .map(|(k, v)| (*k, (*v).to_owned()))
        .collect();
    let url = call.provider.base_url.join(&path);
    headers.extend(match credentials::key_use(call.provider, call.key) {
        KeyUse::Signature => {
            credentials::signature_headers(call.provider, call.key, &url, body, now_ms)
        }
        KeyUse::Header | KeyUse::Token => credentials::key_headers(call.provider, call.key, token),
    });
    let extra = inbound.extra_headers(Dialect::of(call.provider));
    headers.extend(extra);
    (url, headers)
}
