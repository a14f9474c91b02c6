//! The response cache's key: SHA-256 over the tenant and its generation, the caller
//! key's scope, the surface, the requested name, `stream` when the route may depend on it, the
//! headers that shape the answer, and the request body in canonical form.
//!
//! Correct first: two requests share a key only when nothing that can change the answer differs.
//! - The tenant's generation: a tenant deleted and created again under its id starts with an
//!   empty cache, never the old one's answers.
//! - The key's scope (its `models` allow-list, or none): routing ranks only the models a key may
//!   use (`auto:*`), so an answer is shared only by keys whose scope routes the same; a key never
//!   receives an answer from a model its allow-list forbids.
//! - `stream` is in whenever the tenant's rules read `params.stream` (a stream may then take
//!   another route); otherwise a streamed and a plain request share one answer, which a
//!   streamed hit replays as a stream (`response_cache::replay`).
//! - The body leaves out only the top-level fields that cannot change the answer: `stream`
//!   (keyed above when it can), `stream_options`, `user`, `metadata` (and the end-user header,
//!   which is never hashed). Everything else is in: temperature, tools, `n`, `seed`,
//!   `response_format`, every message.
//! - Canonical form (`canonical`): object keys sorted (by their decoded text), at every level;
//!   strings decoded, so `"\u0041"` and `"A"` are one spelling; insignificant whitespace dropped.
//! - Numbers are compared as exact decimals: a spelling is reduced to its sign, its significant
//!   digits and a power of ten (`1`, `1.0`, `1e0`, `1.00`, `10e-1` are all `1e0`). Exact, not via
//!   f64, so two different numbers (a 20-digit `seed`) never share a key; `-0` is `0`.
//! - Each part is length-prefixed or of fixed width, so no two different inputs concatenate to
//!   one byte string.
//!
//! The request path takes the body's digest from the parsed request, after the body passed its
//! size, depth and value limits, field by field as raw text (`body_digest`): never as a tree, in
//! one iterative pass (`canonical`).

use super::canonical::{object_digest, value_token};
use crate::config::{RouteName, SortedMap};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

pub use super::canonical::canonical_number;

/// Top-level body fields that cannot change the answer (`stream` is keyed on its own).
pub const IGNORED_FIELDS: &[&str] = &["stream", "stream_options", "user", "metadata"];

/// Entries stored under keys of an earlier form simply miss.
const VERSION: &[u8] = b"cognigate-response-cache/v2";

/// Everything the key is computed from.
#[derive(Debug, Clone, Copy)]
pub struct KeyInput<'a> {
    pub tenant: &'a str,
    /// The tenant's generation (`usage::generation`): each creation of an id has its own.
    pub generation: u64,
    /// The caller key's `models` allow-list; `None`: the key may use every name.
    pub scope: Option<&'a [RouteName]>,
    /// `chat_completions`, `messages`, `responses` or `embeddings`.
    pub surface: &'a str,
    /// The name the caller asked for (alias, chain or model), after the tenant's default.
    pub requested: &'a str,
    /// The request's `stream` when the tenant's rules read it; `None` when no route depends on it.
    pub stream: Option<bool>,
    /// Request headers that change what is served (pin, `anthropic-beta`, truncation), as sent;
    /// absent ones are left out. Sorted here, so their order does not matter.
    pub headers: &'a [(&'a str, &'a str)],
    /// The body as sent, for `response_key` (the request path passes its digest instead).
    pub body: &'a [u8],
}

/// The hex SHA-256 key of a body as sent; `None` when it is not a JSON object.
pub fn response_key(input: &KeyInput<'_>) -> Option<String> {
    let text = std::str::from_utf8(input.body).ok()?;
    // Read as the request path reads it: a repeated top-level field's last value wins.
    let fields: SortedMap<Cow<'_, str>, &RawValue> = serde_json::from_str(text).ok()?;
    let digest = body_digest(fields.iter().map(|(k, v)| (k.as_ref(), v.get())))?;
    Some(key_with_body(input, &digest))
}

/// SHA-256 of the canonical form of a body given as its top-level fields (name, raw JSON text),
/// as the parsed request holds them; `None` when a value is not JSON.
pub fn body_digest<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<[u8; 32]> {
    let mut members = Vec::new();
    for (name, raw) in fields {
        if !IGNORED_FIELDS.contains(&name) {
            members.push((name.to_owned(), value_token(raw)?));
        }
    }
    Some(object_digest(members))
}

/// The key from its parts and the body's digest (`input.body` is not read).
pub fn key_with_body(input: &KeyInput<'_>, body_digest: &[u8; 32]) -> String {
    let mut h = Sha256::new();
    part(&mut h, VERSION);
    part(&mut h, input.tenant.as_bytes());
    h.update(input.generation.to_be_bytes());
    match input.scope {
        None => h.update([0]),
        Some(names) => {
            let mut names: Vec<&str> = names.iter().map(RouteName::as_str).collect();
            crate::config::sort::sort(&mut names);
            h.update([1]);
            h.update((names.len() as u64).to_be_bytes());
            for name in names {
                part(&mut h, name.as_bytes());
            }
        }
    }
    part(&mut h, input.surface.as_bytes());
    part(&mut h, input.requested.as_bytes());
    h.update([match input.stream {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    }]);
    let mut headers: Vec<(String, &str)> = input
        .headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim()))
        .collect();
    crate::config::sort::sort(&mut headers);
    h.update((headers.len() as u64).to_be_bytes());
    for (name, value) in &headers {
        part(&mut h, name.as_bytes());
        part(&mut h, value.as_bytes());
    }
    part(&mut h, body_digest);
    ::hex::encode(h.finalize())
}

fn part(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_be_bytes());
    h.update(bytes);
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;
