//! Test-only event stream encoder: frames with real CRCs, as Bedrock sends them.

use super::event_stream::crc32;

/// A frame from raw header bytes and a payload.
pub fn raw(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let total = 16 + headers.len() + payload.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// One string header (type 7).
pub fn string_header(name: &str, value: &str) -> Vec<u8> {
    let mut out = vec![name.len() as u8];
    out.extend_from_slice(name.as_bytes());
    out.push(7);
    out.extend_from_slice(&(value.len() as u16).to_be_bytes());
    out.extend_from_slice(value.as_bytes());
    out
}

/// A frame with string headers only.
pub fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let h: Vec<u8> = headers
        .iter()
        .flat_map(|(n, v)| string_header(n, v))
        .collect();
    raw(&h, payload)
}

/// An event frame as ConverseStream sends it (with the padding field `p`).
pub fn event(event_type: &str, payload: serde_json::Value) -> Vec<u8> {
    let mut payload = payload;
    payload["p"] = "abcdefghij".into();
    frame(
        &[
            (":event-type", event_type),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.to_string().as_bytes(),
    )
}

/// An exception frame: lowerCamel type, `{"message": ...}` payload.
pub fn exception(exception_type: &str, message: &str) -> Vec<u8> {
    frame(
        &[
            (":exception-type", exception_type),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        serde_json::json!({ "message": message })
            .to_string()
            .as_bytes(),
    )
}
