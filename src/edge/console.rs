//! `GET /console`: the operator's page, served from bytes compiled into the worker.
//! The page is public (it holds no data); everything it shows comes from the admin API, called by
//! the page's own script with the admin key the operator pastes. The Content-Security-Policy
//! admits only this origin, so the script and style are separate files, never inline.

use super::http::{self, HttpReply};
use crate::api::endpoint::ConsoleFile;
use crate::api::ApiError;

const PAGE: &str = include_str!("console/index.html");
const SCRIPT: &str = include_str!("console/app.js");
const STYLE: &str = include_str!("console/app.css");

/// Only this origin: no inline script or style, no framing, no form posts, no other host.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'";

pub fn serve(file: ConsoleFile) -> HttpReply {
    let (content_type, body) = match file {
        ConsoleFile::Page => ("text/html; charset=utf-8", PAGE),
        ConsoleFile::Script => ("text/javascript; charset=utf-8", SCRIPT),
        ConsoleFile::Style => ("text/css; charset=utf-8", STYLE),
    };
    let resp = http::bytes(200, content_type, body.as_bytes().to_vec())?;
    let headers = resp.headers();
    for (name, value) in [
        ("content-security-policy", CSP),
        ("x-content-type-options", "nosniff"),
        // Revalidated on every load, so a deploy shows at once; the files are small.
        ("cache-control", "no-cache"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
    ] {
        headers.set(name, value).map_err(|_| ApiError::internal())?;
    }
    Ok(resp)
}
