//! The response cache key's canonical form of a JSON value, walked iteratively in one pass.
//!
//! The rules of the form (`key` states them): object keys sorted by their decoded
//! text, strings decoded (so `"\u0041"` is `"A"`), numbers as exact decimals
//! (`canonical_number`), insignificant whitespace dropped. Two values share a form exactly when
//! they are one value under those rules.
//!
//! How it is computed, for a body of up to 10 MiB that another tenant's requests share an
//! isolate with:
//! - One pass over the text with an explicit stack of open containers, never recursion: a deep
//!   value costs heap, not the isolate's stack.
//! - Each value becomes a self-delimiting token; an array adds its elements' tokens to its
//!   content as they come, an object keeps its members' tokens until it closes, sorts them by
//!   key and writes them to its content. A value's token is its content inline while that is
//!   at most `INLINE_MAX` bytes, else the content's SHA-256, taken as it streams: a container's
//!   parent never copies more than that of it, so the walk is linear at any depth (plus the
//!   sort of each object's keys), and what an open object holds stays small beside the body.

use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// One value's part of its container's form: `n`/`t`/`f` for null, true, false; otherwise a tag
/// and the value's content (`scalar`): a string's decoded UTF-8 (`s`), a number's canonical text
/// (`d`), an array's elements' tokens in order (`a`), an object's members sorted by key, each
/// `k` + length + key + token (`o`).
pub type Token = Vec<u8>;

/// Content up to this long stands inline in a token; longer, as its SHA-256.
const INLINE_MAX: usize = 64;

/// A value's content as it is written: kept while short, hashed as it streams once longer.
struct Content {
    bytes: Vec<u8>,
    hasher: Option<Sha256>,
}

impl Content {
    fn new() -> Self {
        Self {
            bytes: Vec::new(),
            hasher: None,
        }
    }

    fn push(&mut self, part: &[u8]) {
        if self.hasher.is_none() && self.bytes.len() + part.len() > INLINE_MAX {
            let mut h = Sha256::new();
            h.update(&self.bytes);
            self.bytes = Vec::new();
            self.hasher = Some(h);
        }
        match &mut self.hasher {
            Some(h) => h.update(part),
            None => self.bytes.extend_from_slice(part),
        }
    }

    /// `tag` + length + the content, or the upper-case tag + its SHA-256 when longer than
    /// `INLINE_MAX`: which of the two depends on the content alone.
    fn token(self, tag: u8) -> Token {
        match self.hasher {
            Some(h) => {
                let mut t = Vec::with_capacity(33);
                t.push(tag.to_ascii_uppercase());
                t.extend_from_slice(&h.finalize());
                t
            }
            None => {
                let mut t = Vec::with_capacity(9 + self.bytes.len());
                t.push(tag);
                t.extend_from_slice(&(self.bytes.len() as u64).to_be_bytes());
                t.extend_from_slice(&self.bytes);
                t
            }
        }
    }

    fn digest(self) -> [u8; 32] {
        match self.hasher {
            Some(h) => h.finalize().into(),
            None => Sha256::digest(&self.bytes).into(),
        }
    }
}

enum Frame {
    Array(Content),
    /// Members so far and the key whose value comes next.
    Object(Vec<(String, Token)>, Option<String>),
}

/// The token of the JSON value `text`; `None` when it is not JSON.
pub fn value_token(text: &str) -> Option<Token> {
    let b = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut at = 0;
    loop {
        // A value starts here: a scalar completes, a container opens (or closes empty).
        at = skip_ws(b, at);
        let mut done = match *b.get(at)? {
            b'[' => {
                at = skip_ws(b, at + 1);
                if b.get(at) == Some(&b']') {
                    at += 1;
                    Some(Content::new().token(b'a'))
                } else {
                    stack.push(Frame::Array(Content::new()));
                    None
                }
            }
            b'{' => {
                at = skip_ws(b, at + 1);
                if b.get(at) == Some(&b'}') {
                    at += 1;
                    Some(Content::new().token(b'o'))
                } else {
                    let (key, next) = member_key(text, at)?;
                    at = next;
                    stack.push(Frame::Object(Vec::new(), Some(key)));
                    None
                }
            }
            b'"' => {
                let (s, next) = string(text, at)?;
                at = next;
                Some(scalar(b's', s.as_bytes()))
            }
            b'-' | b'0'..=b'9' => {
                let end = number_end(b, at)?;
                let token = scalar(b'd', canonical_number(text.get(at..end)?).as_bytes());
                at = end;
                Some(token)
            }
            first => {
                let (word, tag): (&[u8], u8) = match first {
                    b't' => (b"true", b't'),
                    b'f' => (b"false", b'f'),
                    b'n' => (b"null", b'n'),
                    _ => return None,
                };
                if b.get(at..at + word.len()) != Some(word) {
                    return None;
                }
                at += word.len();
                Some(vec![tag])
            }
        };
        // Hand each completed value to its container; a container that ends completes too.
        while let Some(token) = done.take() {
            let Some(frame) = stack.last_mut() else {
                // The outermost value: nothing but whitespace may follow it.
                return (skip_ws(b, at) == b.len()).then_some(token);
            };
            match frame {
                Frame::Array(content) => content.push(&token),
                Frame::Object(members, key) => members.push((key.take()?, token)),
            }
            at = skip_ws(b, at);
            match (b.get(at), &mut *frame) {
                (Some(b','), Frame::Array(_)) => at += 1,
                (Some(b','), Frame::Object(_, key)) => {
                    let (next_key, next) = member_key(text, skip_ws(b, at + 1))?;
                    *key = Some(next_key);
                    at = next;
                }
                (Some(b']'), Frame::Array(_)) | (Some(b'}'), Frame::Object(..)) => {
                    at += 1;
                    done = Some(match stack.pop()? {
                        Frame::Array(content) => content.token(b'a'),
                        Frame::Object(members, _) => object_content(members).token(b'o'),
                    });
                }
                _ => return None,
            }
        }
    }
}

/// The SHA-256 of the content of an object with these members (a key's order among equal keys
/// kept): a body's digest.
pub fn object_digest(members: Vec<(String, Token)>) -> [u8; 32] {
    object_content(members).digest()
}

fn object_content(mut members: Vec<(String, Token)>) -> Content {
    members.sort_by(|a, b| a.0.cmp(&b.0));
    let mut content = Content::new();
    for (key, token) in &members {
        content.push(b"k");
        content.push(&(key.len() as u64).to_be_bytes());
        content.push(key.as_bytes());
        content.push(token);
    }
    content
}

fn scalar(tag: u8, bytes: &[u8]) -> Token {
    let mut content = Content::new();
    content.push(bytes);
    content.token(tag)
}

fn skip_ws(b: &[u8], mut at: usize) -> usize {
    while matches!(b.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// A member's key at `at` and its colon: the key, and where its value may start.
fn member_key(text: &str, at: usize) -> Option<(String, usize)> {
    let b = text.as_bytes();
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let (key, next) = string(text, at)?;
    let colon = skip_ws(b, next);
    (b.get(colon) == Some(&b':')).then(|| (key.into_owned(), colon + 1))
}

/// The string starting at `at` (its opening quote), decoded, and where it ends. Only a string
/// with escapes is decoded (by serde_json); without, its text is itself.
fn string(text: &str, at: usize) -> Option<(Cow<'_, str>, usize)> {
    let b = text.as_bytes();
    let (mut i, mut escaped) = (at + 1, false);
    loop {
        match *b.get(i)? {
            b'"' => break,
            b'\\' => {
                escaped = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
    let raw = text.get(at..=i)?;
    let s = if escaped {
        Cow::Owned(serde_json::from_str::<String>(raw).ok()?)
    } else {
        Cow::Borrowed(text.get(at + 1..i)?)
    };
    Some((s, i + 1))
}

/// Where the JSON number at `at` ends; `None` when it is not one.
fn number_end(b: &[u8], mut at: usize) -> Option<usize> {
    let digits = |b: &[u8], mut at: usize| {
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        (at > start).then_some(at)
    };
    if b.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match b.get(at)? {
        b'0' => at + 1,
        b'1'..=b'9' => digits(b, at)?,
        _ => return None,
    };
    if b.get(at) == Some(&b'.') {
        at = digits(b, at + 1)?;
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        at = digits(b, at)?;
    }
    Some(at)
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
#[path = "canonical_tests.rs"]
mod tests;
