//! Tool call ids that carry Gemini's thought signatures.
//!
//! Gemini 3 signs its function calls (`thoughtSignature` beside the `functionCall`) and refuses a
//! follow-up whose history drops a signature. OpenAI's and Anthropic's shapes have no field for
//! it, but every client sends a tool call's id back unchanged, so the signature rides inside the
//! id: `{base}_ts_{signature as base64url without padding}`. Ids stay within `[A-Za-z0-9_-]`
//! (Anthropic's rule for `tool_use` ids).
//!
//! The base is the call's own id (characters outside `[A-Za-z0-9-]` made `-`) or
//! `call_{n}-{responseId}`: it never holds `_ts_`, so the first `_ts_` of an id is the marker.
//! An id without the marker is a plain id and carries no signature.

const MARKER: &str = "_ts_";

/// Longest part of a foreign id kept in a base: ids stay short enough to log.
const MAX_BASE_PART: usize = 48;

/// The id of the answer's `index`-th tool call: `part_id` is the `functionCall.id` Gemini gave
/// (if any), `response_id` the answer's `responseId` (keeps `call_0` of one answer apart from
/// `call_0` of the next), `signature` the part's `thoughtSignature` (standard base64). A
/// signature that is not base64 cannot be carried faithfully and is left out.
pub fn call_id(
    part_id: Option<&str>,
    response_id: &str,
    index: usize,
    signature: Option<&str>,
) -> String {
    let mut id = match part_id.filter(|p| !p.is_empty()) {
        Some(own) => safe(own),
        None if response_id.is_empty() => format!("call_{index}"),
        None => format!("call_{index}-{}", safe(response_id)),
    };
    if let Some(sig) = signature.and_then(to_base64url) {
        id.push_str(MARKER);
        id.push_str(&sig);
    }
    id
}

/// The thought signature a tool call id carries, as standard base64 with padding; `None` for a
/// plain id or one whose signature part is not base64url.
pub fn signature(id: &str) -> Option<String> {
    let (_, encoded) = id.split_once(MARKER)?;
    from_base64url(encoded)
}

/// `s` with every character outside `[A-Za-z0-9-]` made `-`, at most `MAX_BASE_PART` long.
fn safe(s: &str) -> String {
    s.chars()
        .take(MAX_BASE_PART)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Standard base64 (or already base64url) → base64url without padding.
fn to_base64url(b64: &str) -> Option<String> {
    let mut out = String::with_capacity(b64.len());
    for c in b64.trim_end_matches('=').chars() {
        out.push(match c {
            '+' | '-' => '-',
            '/' | '_' => '_',
            c if c.is_ascii_alphanumeric() => c,
            _ => return None,
        });
    }
    (!out.is_empty()).then_some(out)
}

/// base64url without padding → standard base64 with padding.
fn from_base64url(s: &str) -> Option<String> {
    let padding = match s.len() % 4 {
        0 => "",
        2 => "==",
        3 => "=",
        // One character over a whole group encodes no byte: not base64.
        _ => return None,
    };
    let mut out = String::with_capacity(s.len() + padding.len());
    for c in s.chars() {
        out.push(match c {
            '-' => '+',
            '_' => '/',
            c if c.is_ascii_alphanumeric() => c,
            _ => return None,
        });
    }
    out.push_str(padding);
    (!s.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(id: &str) -> bool {
        id.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    #[test]
    fn a_signature_survives_the_trip_through_the_id_whatever_its_padding() {
        for sig in ["CiQB+/9x", "CiQB+/9xzw==", "CiQB+/9xzwA=", "a/b+c/d+"] {
            let id = call_id(None, "resp", 0, Some(sig));
            assert!(allowed(&id), "{id}");
            assert_eq!(signature(&id).as_deref(), Some(sig), "{id}");
        }
    }

    #[test]
    fn the_base_is_the_calls_own_id_or_its_index_and_the_response_id() {
        assert_eq!(call_id(None, "", 2, None), "call_2");
        assert_eq!(call_id(None, "r_1/x", 0, None), "call_0-r-1-x");
        assert_eq!(call_id(Some("fc_ts_9"), "r", 0, None), "fc-ts-9");
        assert_eq!(call_id(Some(""), "", 1, None), "call_1");
    }

    #[test]
    fn a_base_never_holds_the_marker_so_a_signature_with_marker_like_text_reads_back_whole() {
        // base64url of a signature may itself hold `_ts_`.
        let sig = "AA/ts/BB";
        let id = call_id(Some("ts_ts_"), "_ts_", 0, Some(sig));
        assert_eq!(signature(&id).as_deref(), Some(sig));
    }

    #[test]
    fn plain_ids_and_malformed_signatures_carry_no_signature() {
        assert_eq!(signature("call_abc123"), None);
        assert_eq!(signature("toolu_01XYZ"), None);
        assert_eq!(signature("call_0_ts_"), None);
        assert_eq!(signature("call_0_ts_abcde"), None, "5 chars: not base64");
        assert_eq!(signature("call_0_ts_ab.c"), None);
        assert_eq!(call_id(None, "", 0, Some("not base64!")), "call_0");
        assert_eq!(call_id(None, "", 0, Some("==")), "call_0");
    }

    #[test]
    fn foreign_id_parts_are_bounded() {
        let id = call_id(Some(&"x".repeat(500)), "", 0, None);
        assert_eq!(id.len(), MAX_BASE_PART);
    }
}
