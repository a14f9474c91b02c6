//! Small adapters between worker HTTP types and the gateway's error vocabulary.

use crate::api::{ApiError, ErrorKind};
use crate::surfaces::Surface;
use futures::StreamExt;
use serde::Serialize;
use worker::{Headers, Request, Response};

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

pub fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten()
}

/// Reads the body, refusing with 413 past `limit` bytes (checked against Content-Length first,
/// then while reading, so an unannounced huge body is not buffered either).
pub async fn read_body(req: &mut Request, limit: usize) -> Result<Vec<u8>, ApiError> {
    let announced = header(req, "content-length").and_then(|l| l.parse::<usize>().ok());
    if announced.is_some_and(|len| len > limit) {
        return Err(ApiError::body_too_large(limit));
    }
    if req.inner().body().is_none() {
        return Ok(Vec::new());
    }
    let mut stream = req.stream().map_err(|_| {
        ApiError::new(
            ErrorKind::InvalidBody,
            "The request body could not be read.",
        )
    })?;
    // Sized once when announced, so the buffer does not double its way up (2x at the peak).
    let mut body = Vec::with_capacity(announced.unwrap_or(0));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| {
            ApiError::new(
                ErrorKind::InvalidBody,
                "The request body could not be read.",
            )
        })?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::body_too_large(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

pub fn random_bytes<const N: usize>() -> Result<[u8; N], ApiError> {
    let mut buf = [0u8; N];
    getrandom::getrandom(&mut buf).map_err(|_| ApiError::internal())?;
    Ok(buf)
}

pub fn now_ms() -> u64 {
    worker::Date::now().as_millis()
}
