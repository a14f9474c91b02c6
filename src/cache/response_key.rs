//! The response cache's key (issue 27): SHA-256 over the tenant, the surface, the requested name,
//! the headers that shape the answer, and the request body in canonical form.
//!
//! Correct first: two requests share a key only when nothing that can change the answer differs.
//! - The body leaves out only the top-level fields that cannot change the answer: `stream`,
//!   `stream_options`, `user`, `metadata` (and the end-user header, which is never hashed).
//!   Everything else is in: temperature, tools, `n`, `seed`, `response_format`, every message.
//! - Canonical form: object keys sorted (by their decoded text), recursively; strings decoded and
//!   re-encoded, so `"\u0041"` and `"A"` are one spelling; insignificant whitespace dropped.
//! - Numbers are compared as exact decimals: a spelling is reduced to its sign, its significant
//!   digits and a power of ten (`1`, `1.0`, `1e0`, `1.00`, `10e-1` are all `1e0`). Exact, not via
//!   f64, so two different numbers (a 20-digit `seed`) never share a key; `-0` is `0`.
//! - Each part is length-prefixed, so no two different inputs concatenate to one byte string.
//!
//! The body is walked as raw JSON text (`RawValue`), one level at a time, never as a tree: the
//! request path keeps bodies as text for memory on wasm32.

use crate::config::SortedMap;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// Top-level body fields that cannot change the answer.
pub const IGNORED_FIELDS: &[&str] = &["stream", "stream_options", "user", "metadata"];

/// Everything the key is computed from.
#[derive(Debug, Clone, Copy)]
pub struct KeyInput<'a> {
    pub tenant: &'a str,
    /// `chat_completions`, `messages`, `responses` or `embeddings`.
    pub surface: &'a str,
    /// The name the caller asked for (alias, chain or model), after the tenant's default.
    pub requested: &'a str,
    /// Request headers that change what is served (pin, `anthropic-beta`, truncation), as sent;
    /// absent ones are left out. Sorted here, so their order does not matter.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

/// The hex SHA-256 key; `None` when the body is not JSON (such a request is refused before).
pub fn response_key(input: &KeyInput<'_>) -> Option<String> {
    Some(key_with_body(input, &body_digest(input.body)?))
}

/// SHA-256 of the body's canonical form: taken before the body is parsed into the request, so
/// the body is never held twice; `None` when it is not JSON.
pub fn body_digest(body: &[u8]) -> Option<[u8; 32]> {
    let body = std::str::from_utf8(body).ok()?;
    let raw: &RawValue = serde_json::from_str(body).ok()?;
    let canonical = canonical_body(raw)?;
    Some(Sha256::digest(canonical.as_bytes()).into())
}

/// The key from its parts and the body's digest (`input.body` is not read).
pub fn key_with_body(input: &KeyInput<'_>, body_digest: &[u8; 32]) -> String {
    let mut h = Sha256::new();
    part(&mut h, b"cognigate-response-cache/v1");
    part(&mut h, input.tenant.as_bytes());
    part(&mut h, input.surface.as_bytes());
    part(&mut h, input.requested.as_bytes());
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

/// The body's canonical text, without the ignored top-level fields.
pub fn canonical_body(raw: &RawValue) -> Option<String> {
    let mut out = String::new();
    write_value(raw, true, &mut out)?;
    Some(out)
}

/// The canonical text of any JSON value (keys sorted, numbers and strings normalised).
pub fn canonical(raw: &RawValue) -> Option<String> {
    let mut out = String::new();
    write_value(raw, false, &mut out)?;
    Some(out)
}

fn write_value(raw: &RawValue, top: bool, out: &mut String) -> Option<()> {
    let text = raw.get().trim();
    match text.as_bytes().first()? {
        b'{' => {
            let map: SortedMap<String, &RawValue> = serde_json::from_str(text).ok()?;
            out.push('{');
            let mut first = true;
            for (k, v) in map {
                if top && IGNORED_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&serde_json::to_string(&k).ok()?);
                out.push(':');
                write_value(v, false, out)?;
            }
            out.push('}');
        }
        b'[' => {
            let items: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            out.push('[');
            for (i, v) in items.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(v, false, out)?;
            }
            out.push(']');
        }
        b'"' => {
            let s: String = serde_json::from_str(text).ok()?;
            out.push_str(&serde_json::to_string(&s).ok()?);
        }
        b'-' | b'0'..=b'9' => out.push_str(&canonical_number(text)),
        // true, false, null: one spelling each.
        _ => out.push_str(text),
    }
    Some(())
}

/// A JSON number as `[-]<significant digits>e<power of ten>`, exact: `1.50` → `15e-1`,
/// `100` → `1e2`, `0.0` → `0`. A spelling it cannot reduce (an exponent past i64) is kept as
/// sent: a different key at worst, never a shared one.
pub fn canonical_number(text: &str) -> String {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let exp: i64 = match exp.map(|e| e.strip_prefix('+').unwrap_or(e).parse::<i64>()) {
        None => 0,
        Some(Ok(e)) => e,
        Some(Err(_)) => return text.to_owned(),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = int.chars().chain(frac.chars()).collect();
    let Some(mut exp) = i64::try_from(frac.len())
        .ok()
        .and_then(|f| exp.checked_sub(f))
    else {
        return text.to_owned();
    };
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return "0".to_owned();
    }
    let significant = digits.trim_end_matches('0');
    let Some(e) = i64::try_from(digits.len() - significant.len())
        .ok()
        .and_then(|z| exp.checked_add(z))
    else {
        return text.to_owned();
    };
    exp = e;
    format!("{}{significant}e{exp}", if negative { "-" } else { "" })
}

#[cfg(test)]
#[path = "response_key_tests.rs"]
mod tests;
