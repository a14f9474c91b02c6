//! What a prompt field's JSON text counts for in the estimate (`estimate::prompt_bytes`): every
//! byte as text, except an image part's recognised image payload, which counts as one image.
//!
//! A part's label alone buys nothing: a part of type `image`, `image_url` or `input_image` counts
//! one image (`IMAGE_TOKENS`) in place of the one payload its type names, when that payload looks
//! like an image a provider would fetch or decode, and every other byte of the part (a `text`
//! member, a `media_type`, a payload that is not an image) counts as text. So the estimate is
//! never below the estimate of the request's text bytes, whatever a caller labels them.
//!
//! Recognised payloads, by the part's type:
//! - `image` (Messages): `source.data` (base64) or `source.url`;
//! - `image_url` (chat completions): `image_url.url`, or `image_url` itself as a string;
//! - `input_image` (Responses): `image_url` (the string, or its object's `url`).
//!
//! A URL is recognised as `data:<type>;base64,<base64>` or an `http(s)` URL of at most
//! `MAX_URL_BYTES` printable ASCII bytes (no server fetches a longer one).
//!
//! One pass over the bytes with a stack of the open containers (at most `MAX_DEPTH` deep, as the
//! body was checked), no tree and no copy: the estimate runs on every request. The text is one
//! the parser already accepted; anything unexpected counts the whole text as text.

use super::estimate::{BYTES_PER_TOKEN, IMAGE_TOKENS};

/// The longest `http(s)` URL recognised as an image: longer, it counts as text.
pub const MAX_URL_BYTES: usize = 8_192;

/// The longest `data:` URL header (`data:image/png;base64`) recognised.
const MAX_DATA_HEADER: usize = 128;

/// What one image counts for, in bytes of text.
const IMAGE_BYTES: usize = IMAGE_TOKENS as usize * BYTES_PER_TOKEN;

/// The bytes `raw` (one field's JSON text) counts for.
pub fn counted_bytes(raw: &str) -> usize {
    Scan::default().run(raw.as_bytes()).unwrap_or(raw.len())
}

/// The member names that matter, as they appear in the text (quoted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Key {
    Type,
    ImageUrl,
    Source,
    Url,
    Data,
    #[default]
    Other,
}

impl Key {
    fn of(token: &[u8]) -> Self {
        match token {
            b"\"type\"" => Self::Type,
            b"\"image_url\"" => Self::ImageUrl,
            b"\"source\"" => Self::Source,
            b"\"url\"" => Self::Url,
            b"\"data\"" => Self::Data,
            _ => Self::Other,
        }
    }
}

/// A part's `type`, as far as images go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Kind {
    Image,
    ImageUrl,
    InputImage,
    #[default]
    Other,
}

impl Kind {
    fn of(value: Value<'_>) -> Self {
        match value {
            Value::Str(b"\"image\"") => Self::Image,
            Value::Str(b"\"image_url\"") => Self::ImageUrl,
            Value::Str(b"\"input_image\"") => Self::InputImage,
            _ => Self::Other,
        }
    }
}

/// One open array or object. Payload sizes are the bytes of the JSON string token (quotes
/// included) of the member's last value, 0 when that value is not a recognised payload.
#[derive(Debug, Default)]
struct Open {
    object: bool,
    /// In an object: the next string is a member name.
    expect_key: bool,
    /// The member whose value is being read.
    key: Key,
    /// How many `type` members: a part with more than one is no image part.
    types: u32,
    kind: Kind,
    /// The payload under `source` (its `data` or `url`).
    source: usize,
    /// The payload at `image_url` (the string, or its object's `url`).
    image_url: usize,
    /// This object's own `url` and `data`, for the member of its parent it is the value of.
    own_url: usize,
    own_data: usize,
}

/// A value just read, as its container sees it.
#[derive(Clone, Copy)]
enum Value<'a> {
    /// A string's token, quotes included.
    Str(&'a [u8]),
    Container {
        own_url: usize,
        own_data: usize,
    },
    Scalar,
}

#[derive(Default)]
struct Scan {
    open: Vec<Open>,
    /// Bytes of recognised payloads, replaced by `images` × `IMAGE_BYTES`.
    payloads: usize,
    images: usize,
}

impl Scan {
    fn run(mut self, text: &[u8]) -> Option<usize> {
        let mut i = 0;
        while let Some(&b) = text.get(i) {
            match b {
                b'{' | b'[' => {
                    let object = b == b'{';
                    self.open.push(Open {
                        object,
                        expect_key: object,
                        ..Open::default()
                    });
                    i += 1;
                }
                b'}' | b']' => {
                    let done = self.open.pop()?;
                    if done.object != (b == b'}') {
                        return None;
                    }
                    self.close(&done);
                    self.value(Value::Container {
                        own_url: done.own_url,
                        own_data: done.own_data,
                    });
                    i += 1;
                }
                b'"' => {
                    let end = string_end(text, i + 1)?;
                    let token = text.get(i..=end)?;
                    i = end + 1;
                    match self.open.last_mut() {
                        Some(top) if top.object && top.expect_key => {
                            top.key = Key::of(token);
                            top.expect_key = false;
                        }
                        _ => self.value(Value::Str(token)),
                    }
                }
                b',' => {
                    if let Some(top) = self.open.last_mut() {
                        top.expect_key = top.object;
                    }
                    i += 1;
                }
                b':' | b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                _ => {
                    while text.get(i).is_some_and(|c| {
                        !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                    }) {
                        i += 1;
                    }
                    self.value(Value::Scalar);
                }
            }
        }
        if !self.open.is_empty() {
            return None;
        }
        let text_bytes = text.len().saturating_sub(self.payloads);
        Some(text_bytes.saturating_add(self.images.saturating_mul(IMAGE_BYTES)))
    }

    /// A value of the innermost open container was read.
    fn value(&mut self, v: Value<'_>) {
        let Some(top) = self.open.last_mut().filter(|t| t.object) else {
            return;
        };
        match top.key {
            Key::Type => {
                top.types = top.types.saturating_add(1);
                top.kind = Kind::of(v);
            }
            Key::ImageUrl => {
                top.image_url = match v {
                    Value::Str(token) => url_payload(token),
                    Value::Container { own_url, .. } => own_url,
                    Value::Scalar => 0,
                }
            }
            Key::Source => {
                top.source = match v {
                    Value::Container { own_url, own_data } => own_url.max(own_data),
                    _ => 0,
                }
            }
            Key::Url => {
                top.own_url = match v {
                    Value::Str(token) => url_payload(token),
                    _ => 0,
                }
            }
            Key::Data => {
                top.own_data = match v {
                    Value::Str(token) if is_base64(inner(token)) => token.len(),
                    _ => 0,
                }
            }
            Key::Other => {}
        }
    }

    /// An object closed: if it is an image part, its payload counts as one image.
    fn close(&mut self, done: &Open) {
        if !done.object || done.types != 1 {
            return;
        }
        let payload = match done.kind {
            Kind::Image => done.source,
            Kind::ImageUrl | Kind::InputImage => done.image_url,
            Kind::Other => return,
        };
        self.images = self.images.saturating_add(1);
        self.payloads = self.payloads.saturating_add(payload);
    }
}

/// The index of the quote that closes the string whose content starts at `i`.
fn string_end(text: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match text.get(i)? {
            b'"' => return Some(i),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// A string token's content, without its quotes.
fn inner(token: &[u8]) -> &[u8] {
    token
        .get(1..token.len().saturating_sub(1))
        .unwrap_or_default()
}

/// The token's size if it is an image URL (a base64 `data:` URL, or an `http(s)` URL), else 0.
fn url_payload(token: &[u8]) -> usize {
    let url = inner(token);
    let starts = |prefix: &[u8]| {
        url.get(..prefix.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
    };
    let recognised = if starts(b"data:") {
        let header_end = url.iter().take(MAX_DATA_HEADER).position(|&c| c == b',');
        header_end.is_some_and(|at| {
            let header = url.get(..at).unwrap_or_default();
            let data = url.get(at + 1..).unwrap_or_default();
            header.ends_with(b";base64")
                && header.iter().all(|c| (0x21..0x7f).contains(c))
                && is_base64(data)
        })
    } else if starts(b"https://") || starts(b"http://") {
        token.len() <= MAX_URL_BYTES && is_url_text(url)
    } else {
        false
    };
    if recognised {
        token.len()
    } else {
        0
    }
}

/// Base64 (standard or URL-safe, padded or not) as JSON text: `\/` and escaped line breaks are
/// allowed, any other escape or character is not.
fn is_base64(content: &[u8]) -> bool {
    let mut bytes = content.iter();
    while let Some(&c) = bytes.next() {
        match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' | b'=' | b'-' | b'_' => {}
            b'\\' if matches!(bytes.next(), Some(b'/' | b'n' | b'r')) => {}
            _ => return false,
        }
    }
    true
}

/// Printable ASCII with no space, and no escape but `\/`.
fn is_url_text(content: &[u8]) -> bool {
    let mut bytes = content.iter();
    while let Some(&c) = bytes.next() {
        match c {
            b'\\' if bytes.next() == Some(&b'/') => {}
            b'\\' => return false,
            0x21..=0x7e => {}
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
#[path = "image_parts_tests.rs"]
mod tests;
