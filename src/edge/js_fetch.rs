//! `fetch` and whole-body reads on the runtime's own objects, under workers-rs's wrappers.
//!
//! Why not `worker::Request`/`Response`: converting into them reads properties a gateway never
//! uses (`cf`, `webSocket`) on every call, and their body reads go through a JavaScript stream
//! reader (a `read()` per chunk, then `releaseLock()`). `make profile` showed those reads and
//! releases as the largest single CPU cost of a request; one `arrayBuffer()` is one promise.
//!
//! Why a few lines of JavaScript (`fetch_within`, `header_lines`, `set_headers`): a non-streamed
//! call is fetch, a timer, two header reads and `arrayBuffer()`. Driven from Rust, that is two promises awaited through
//! wasm-bindgen (two closures each, and an executor wake), two timers with a Rust closure each,
//! and about 20 crossings of the boundary. Chained in JavaScript it is one promise, one timer and
//! a few crossings; what it decides (the announced-length check) only picks the fast read, and
//! every answer it gives is the one the Rust path gave. Likewise a chat request's ten or so header
//! lookups are one call, not a `headers` and a `get` crossing each, and the headers an answer or
//! an upstream request gets are set in one call (`set_all`).

use super::body_read::{read_bounded, Bounded};
use crate::cascade::body_limit::Capped;
pub use crate::request::access_token::Posted;
use futures::future::{select, Either};
use std::pin::pin;
use std::time::Duration;
use wasm_bindgen::prelude::wasm_bindgen;
use worker::js_sys::{Promise, Uint8Array};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Delay};

#[wasm_bindgen(inline_js = r#"
export function fetch_within(url, init, timeoutMs, limit) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    const done = (exchange) => {
      clearTimeout(timer);
      resolve(exchange);
    };
    fetch(url, init).then(
      (response) => {
        const headersAt = Date.now();
        const ok = response.status >= 200 && response.status <= 299;
        if (!(limit >= 0) || !ok || !announced(response.headers, limit)) {
          done({ response, headersAt, body: undefined, bodyFailed: false });
          return;
        }
        response.arrayBuffer().then(
          (buf) => done({ response, headersAt, body: new Uint8Array(buf), bodyFailed: false }),
          (bodyError) => done({ response, headersAt, body: undefined, bodyFailed: true, bodyError }),
        );
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export function header_lines(request) {
  let lines = "";
  for (const [name, value] of request.headers) lines += name + "\n" + value + "\n";
  return lines;
}

export function set_headers(headers, lines) {
  const parts = lines.split("\n");
  for (let i = 0; i + 1 < parts.length; i += 2) headers.set(parts[i], parts[i + 1]);
}

function announced(headers, limit) {
  const len = headers.get("content-length");
  if (len === null || !/^[0-9]+$/.test(len)) return false;
  const encoding = headers.get("content-encoding");
  return Number(len) <= limit && (encoding === null || encoding.toLowerCase() === "identity");
}
"#)]
extern "C" {
    /// What `fetch_within` resolves to when the headers came in time.
    type Exchange;
    #[wasm_bindgen(method, getter)]
    fn response(this: &Exchange) -> web_sys::Response;
    #[wasm_bindgen(method, getter, js_name = headersAt)]
    fn headers_at(this: &Exchange) -> f64;
    #[wasm_bindgen(method, getter)]
    fn body(this: &Exchange) -> Option<Uint8Array>;
    #[wasm_bindgen(method, getter, js_name = bodyFailed)]
    fn body_failed(this: &Exchange) -> bool;
    #[wasm_bindgen(method, getter, js_name = bodyError)]
    fn body_error(this: &Exchange) -> JsValue;

    /// `fetch(url, init)` raced with one `timeoutMs` timer. With `limit >= 0`, a 2xx whose body
    /// length is announced, at most `limit` and not content-encoded is read whole within the same
    /// timer. Resolves to an `Exchange`, or to `undefined` when the timer fired first; rejects
    /// with `fetch`'s own error.
    #[wasm_bindgen(js_name = fetch_within)]
    fn fetch_within_js(
        url: &str,
        init: &web_sys::RequestInit,
        timeout_ms: f64,
        limit: f64,
    ) -> Promise;

    /// Every header of `request`, `name\nvalue\n` each, in one call (`api::header_lines`).
    pub fn header_lines(request: &web_sys::Request) -> String;
    /// The same of an answer.
    #[wasm_bindgen(js_name = header_lines)]
    pub fn answer_header_lines(response: &web_sys::Response) -> String;

    /// `headers.set(name, value)` for each `name\nvalue\n` of `lines`, in order.
    #[wasm_bindgen(catch)]
    fn set_headers(headers: &web_sys::Headers, lines: &str) -> Result<(), JsValue>;
}

/// `headers.set(name, value)` for each pair, in order, in one crossing. A pair holding a newline
/// (the text's separator, and a value the runtime refuses) is set one by one instead, so it
/// fails exactly where and as `set` fails.
pub fn set_all(headers: &web_sys::Headers, pairs: &[(&str, &str)]) -> Result<(), JsValue> {
    if pairs
        .iter()
        .any(|(n, v)| n.contains('\n') || v.contains('\n'))
    {
        return pairs.iter().try_for_each(|(n, v)| headers.set(n, v));
    }
    let mut lines = String::with_capacity(pairs.iter().map(|(n, v)| n.len() + v.len() + 2).sum());
    for (n, v) in pairs {
        lines.push_str(n);
        lines.push('\n');
        lines.push_str(v);
        lines.push('\n');
    }
    set_headers(headers, &lines)
}

/// How `fetch_within` ended.
pub enum Fetched {
    /// The headers came within the timeout: the response, when they came (ms since the epoch),
    /// and its whole body when it was read with them.
    Answered {
        resp: web_sys::Response,
        headers_at: u64,
        whole: Option<Whole>,
    },
    Failed(String),
    TimedOut,
}

/// `fetch(url, init)` within `timeout_ms`. With `whole_limit`, a 2xx body announced at most that
/// long (and not content-encoded) is read whole within the same timeout: the caller reads any
/// other body the long way, with what is left of it.
pub async fn fetch_within(
    url: &str,
    init: &web_sys::RequestInit,
    timeout_ms: u64,
    whole_limit: Option<usize>,
) -> Fetched {
    let limit = whole_limit.map_or(-1.0, |l| l as f64);
    let settled = JsFuture::from(fetch_within_js(url, init, timeout_ms as f64, limit)).await;
    let exchange = match settled {
        Ok(v) if v.is_undefined() => return Fetched::TimedOut,
        Ok(v) => v.unchecked_into::<Exchange>(),
        Err(e) => return Fetched::Failed(describe(e)),
    };
    let whole = match exchange.body() {
        Some(bytes) => Some(Whole::Read(bytes.to_vec())),
        None if exchange.body_failed() => Some(Whole::Failed(describe(exchange.body_error()))),
        None => None,
    };
    Fetched::Answered {
        resp: exchange.response(),
        headers_at: exchange.headers_at() as u64,
        whole,
    }
}

/// A POST of `body` with `headers` to `url` within `timeout_ms`, its redirects answers like any
/// other (never followed: what it carries would go along). With `read`, the answer's body is
/// read up to that many bytes within the same timeout; without, it is left unread.
pub async fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout_ms: u64,
    read: Option<usize>,
) -> Posted {
    let deadline = super::http::now_ms().saturating_add(timeout_ms);
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    let set = web_sys::Headers::new().and_then(|h| set_all(&h, headers).map(|()| h));
    match set {
        Ok(h) => init.set_headers(&h),
        Err(e) => return Posted::Failed(describe(e)),
    }
    init.set_body(&Uint8Array::from(body));
    init.set_redirect(web_sys::RequestRedirect::Manual);
    let resp = match fetch_within(url, &init, timeout_ms, None).await {
        Fetched::Answered { resp, .. } => resp,
        Fetched::Failed(e) => return Posted::Failed(e),
        Fetched::TimedOut => return Posted::TimedOut,
    };
    let status = resp.status();
    let Some(limit) = read else {
        return Posted::Answered {
            status,
            body: Vec::new(),
        };
    };
    match read_bounded(&resp, Capped::new(limit), deadline, Capped::full).await {
        Bounded::Read(buf) => Posted::Answered {
            status,
            body: buf.into_bytes(),
        },
        Bounded::Failed(e) => Posted::Failed(e),
        Bounded::TimedOut => Posted::TimedOut,
    }
}

/// A JS failure as text, exactly as workers-rs renders it (attempt details and logs keep their
/// wording).
pub fn describe(e: JsValue) -> String {
    worker::Error::from(e).to_string()
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
