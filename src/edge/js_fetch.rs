//! `fetch` and whole-body reads on the runtime's own objects, under workers-rs's wrappers.
//!
//! Why not `worker::Request`/`Response`: converting into them reads properties a gateway never
//! uses (`cf`, `webSocket`) on every call, and their body reads go through a JavaScript stream
//! reader (a `read()` per chunk, then `releaseLock()`). `make profile` showed those reads and
//! releases as the largest single CPU cost of a request; one `arrayBuffer()` is one promise.

use futures::future::{select, Either};
use std::pin::pin;
use std::time::Duration;
use worker::js_sys::{self, Promise, Uint8Array};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Delay};

/// A JS failure as text, exactly as workers-rs renders it (attempt details and logs keep their
/// wording).
pub fn describe(e: JsValue) -> String {
    worker::Error::from(e).to_string()
}

/// `fetch(url, init)` on the global scope: no `Request` object is built for it.
pub async fn fetch(url: &str, init: &web_sys::RequestInit) -> Result<web_sys::Response, String> {
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let resp = JsFuture::from(scope.fetch_with_str_and_init(url, init))
        .await
        .map_err(describe)?;
    resp.dyn_into().map_err(describe)
}

/// The bytes `arrayBuffer()` resolves to.
pub async fn whole(promise: Result<Promise, JsValue>) -> Result<Vec<u8>, String> {
    let buf = JsFuture::from(promise.map_err(describe)?)
        .await
        .map_err(describe)?;
    Ok(Uint8Array::new(&buf).to_vec())
}

/// How a whole-body read within a time bound ended.
pub enum Whole {
    Read(Vec<u8>),
    Failed(String),
    TimedOut,
}

/// The response's whole body within `timeout_ms`, when its length is announced, at most `limit`,
/// and not content-encoded (the runtime would inflate it past the announced length): such a body
/// cannot outgrow the cap, so it needs no chunk-by-chunk watch. `None`: read it the long way.
pub async fn announced_body(
    resp: &web_sys::Response,
    limit: usize,
    timeout_ms: u64,
) -> Option<Whole> {
    let headers = resp.headers();
    let len = headers.get("content-length").ok().flatten()?;
    let len: usize = len.trim().parse().ok()?;
    let encoded = headers
        .get("content-encoding")
        .ok()
        .flatten()
        .is_some_and(|e| !e.trim().eq_ignore_ascii_case("identity"));
    if len > limit || encoded {
        return None;
    }
    let read = pin!(whole(resp.array_buffer()));
    let timer = pin!(Delay::from(Duration::from_millis(timeout_ms)));
    Some(match select(read, timer).await {
        Either::Left((Ok(bytes), _)) => Whole::Read(bytes),
        Either::Left((Err(e), _)) => Whole::Failed(e),
        Either::Right(_) => Whole::TimedOut,
    })
}
