//! The token endpoint port (`request::access_token`): WebCrypto's RS256 signature and the
//! exchange's `fetch`. Each isolate keeps its own tokens.

use super::http::now_ms;
use super::js_fetch;
use super::upstream::UpstreamBody;
use crate::cascade::body_limit::MAX_ERROR_BODY;
use crate::cascade::{Call, UpstreamReply};
use crate::providers::google_token::TokenCache;
use crate::request::access_token::{self, Posted, TokenEndpoint};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::wasm_bindgen;
use worker::js_sys::{Promise, Uint8Array};
use worker::wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(inline_js = r#"
export function rs256(der, data) {
  const alg = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  return crypto.subtle.importKey("pkcs8", der, alg, false, ["sign"])
    .then((key) => crypto.subtle.sign(alg, key, data))
    .then((sig) => new Uint8Array(sig));
}
"#)]
extern "C" {
    fn rs256(der: &Uint8Array, data: &Uint8Array) -> Promise;
}

thread_local! {
    static TOKENS: Rc<RefCell<TokenCache>> = Rc::default();
}

struct WorkerTokenEndpoint;

impl TokenEndpoint for WorkerTokenEndpoint {
    async fn sign(&self, der: &[u8], data: &[u8]) -> Option<Vec<u8>> {
        let signed = rs256(&Uint8Array::from(der), &Uint8Array::from(data));
        let signature = JsFuture::from(signed).await.ok()?;
        Some(Uint8Array::new(&signature).to_vec())
    }

    async fn post_form(&self, url: &str, form: String, timeout_ms: u64) -> Posted {
        let form_type = [("content-type", "application/x-www-form-urlencoded")];
        js_fetch::post(
            url,
            &form_type,
            form.as_bytes(),
            timeout_ms,
            Some(MAX_ERROR_BODY),
        )
        .await
    }
}

/// The access token `call`'s key needs, if any (`request::access_token`).
pub async fn token_for(call: &Call<'_>) -> Result<Option<String>, UpstreamReply<UpstreamBody>> {
    let cache = TOKENS.with(Rc::clone);
    access_token::token_for(&WorkerTokenEndpoint, &cache, call, now_ms).await
}
