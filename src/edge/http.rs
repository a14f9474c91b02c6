//! Small adapters between worker HTTP types and the gateway's error vocabulary.

use crate::api::{ApiError, ErrorKind};
use crate::surfaces::Surface;
use futures::StreamExt;
use serde::Serialize;
use worker::{web_sys, ByteStream, Headers, Request, Response};

pub type HttpReply = std::result::Result<Response, ApiError>;

pub fn json<T: Serialize>(status: u16, value: &T) -> HttpReply {
    let body = serde_json::to_vec(value).map_err(|_| ApiError::internal())?;
    bytes(status, "application/json", body)
}

pub fn bytes(status: u16, content_type: &str, body: Vec<u8>) -> HttpReply {
    let headers = Headers::new();
    headers
        .set("content-type", content_type)
        .map_err(|_| ApiError::internal())?;
    Ok(Response::from_bytes(body)
        .map_err(|_| ApiError::internal())?
        .with_status(status)
        .with_headers(headers))
}

/// The error in the shape the caller's surface reads.
pub fn error_in(surface: Surface, err: &ApiError) -> worker::Result<Response> {
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    Ok(Response::from_bytes(surface.error_json(err).into_bytes())?
        .with_status(err.status())
        .with_headers(headers))
}

/// A caller's request as the runtime hands it over (the chat surfaces read it so), or wrapped by
/// workers-rs (every other route). The wrapper reads `cf` and parses the URL when it is made,
/// which the hot path does not need (`make profile`).
pub trait RawRequest {
    fn raw(&self) -> &web_sys::Request;

    /// The header's value as `Headers.get` gives it.
    fn header(&self, name: &str) -> Option<String> {
        self.raw().headers().get(name).ok().flatten()
    }
}

/// The runtime's request with its headers read once, in one crossing: the chat surfaces look up
/// about ten headers per request. An arriving request's headers cannot change, so the snapshot
/// stays true.
pub struct CallerRequest {
    raw: web_sys::Request,
    headers: String,
}

impl CallerRequest {
    pub fn new(raw: web_sys::Request) -> Self {
        let headers = super::js_fetch::header_lines(&raw);
        Self { raw, headers }
    }
}

impl RawRequest for CallerRequest {
    fn raw(&self) -> &web_sys::Request {
        &self.raw
    }

    fn header(&self, name: &str) -> Option<String> {
        crate::api::header_lines::find(&self.headers, name).map(str::to_owned)
    }
}

impl crate::request::Incoming for CallerRequest {
    fn header(&self, name: &str) -> Option<&str> {
        crate::api::header_lines::find(&self.headers, name)
    }

    async fn body(&self, limit: usize) -> Result<Vec<u8>, ApiError> {
        read_body(self, limit).await
    }
}

impl RawRequest for Request {
    fn raw(&self) -> &web_sys::Request {
        self.inner()
    }
}

impl RawRequest for web_sys::Request {
    fn raw(&self) -> &web_sys::Request {
        self
    }
}

/// A Durable Object call's JSON body, parsed from its text by serde_json. workers-rs's
/// `Request::json` parses it in JavaScript and reads the value back through serde_wasm_bindgen,
/// one boundary crossing per field: about 900 for a settle batch, run on the isolate's one
/// thread between requests.
pub async fn json_body<T: serde::de::DeserializeOwned>(req: &mut Request) -> worker::Result<T> {
    Ok(serde_json::from_str(&req.text().await?)?)
}

pub fn header(req: &impl RawRequest, name: &str) -> Option<String> {
    req.header(name)
}

/// Reads the body, refusing with 413 past `limit` bytes (checked against Content-Length first,
/// then while reading, so an unannounced huge body is not buffered either).
pub async fn read_body(req: &impl RawRequest, limit: usize) -> Result<Vec<u8>, ApiError> {
    let announced = header(req, "content-length").and_then(|l| l.parse::<usize>().ok());
    if announced.is_some_and(|len| len > limit) {
        return Err(ApiError::body_too_large(limit));
    }
    let Some(stream) = req.raw().body() else {
        return Ok(Vec::new());
    };
    // An announced length frames the body (HTTP/1.1 and 2 alike), so it cannot outgrow the check
    // above: one `arrayBuffer()` instead of a reader's read per chunk (`js_fetch`).
    if announced.is_some() {
        let body = super::js_fetch::whole(req.raw().array_buffer())
            .await
            .map_err(|_| unreadable())?;
        if body.len() > limit {
            return Err(ApiError::body_too_large(limit));
        }
        return Ok(body);
    }
    let mut stream = ByteStream::from(stream);
    // Sized once when announced, so the buffer does not double its way up (2x at the peak).
    let mut body = Vec::with_capacity(announced.unwrap_or(0));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| unreadable())?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::body_too_large(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn unreadable() -> ApiError {
    ApiError::new(
        ErrorKind::InvalidBody,
        "The request body could not be read.",
    )
}

pub fn random_bytes<const N: usize>() -> Result<[u8; N], ApiError> {
    let mut buf = [0u8; N];
    getrandom::getrandom(&mut buf).map_err(|_| ApiError::internal())?;
    Ok(buf)
}

/// `Date.now()`: one call into the runtime and no object (workers-rs's `Date::now()` builds a JS
/// `Date` and reads it back, two calls, and `make profile` had `new Date` in its top 15).
pub fn now_ms() -> u64 {
    worker::js_sys::Date::now() as u64
}
