//! Google's Gemini `generateContent` family behind OpenAI's chat-completions shape. The same bodies
//! serve the Gemini API and Vertex AI's google publisher models; only the URL prefix and the auth
//! differ, and those are the caller's to add.

mod contents;
pub mod embeddings;
pub mod errors;
mod parts;
pub mod request;
pub mod response;
pub mod stream;
pub mod tool_id;

/// The Gemini API's base URL; `path` and `embeddings::path` are appended to it.
pub const BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta/";

/// `models/{m}:generateContent`, or `models/{m}:streamGenerateContent?alt=sse` for a stream
/// (without `alt=sse` Gemini streams one JSON array, which no SSE reader can follow).
pub fn path(upstream_model: &str, stream: bool) -> String {
    let model = model_segment(upstream_model);
    if stream {
        format!("models/{model}:streamGenerateContent?alt=sse")
    } else {
        format!("models/{model}:generateContent")
    }
}

/// The model id as one URL path segment: a leading `models/` is dropped (ids are often written
/// as resource names) and every byte outside `A-Za-z0-9-._~` is percent-encoded, so an id can
/// never add a path segment or a query of its own.
fn model_segment(upstream_model: &str) -> String {
    super::address::encode(bare_model(upstream_model), false)
}

/// The model id without a leading `models/`.
fn bare_model(upstream_model: &str) -> &str {
    upstream_model
        .strip_prefix("models/")
        .unwrap_or(upstream_model)
}

/// Finish reasons that mean a safety or policy filter stopped the answer.
const REFUSALS: &[&str] = &[
    "SAFETY",
    "IMAGE_SAFETY",
    "RECITATION",
    "PROHIBITED_CONTENT",
    "BLOCKLIST",
    "SPII",
];

/// Whether a `finishReason` is a filter's refusal.
pub fn is_refusal_reason(reason: &str) -> bool {
    REFUSALS.contains(&reason)
}

/// `finishReason` → `finish_reason`. Gemini ends a turn of function calls with `STOP`, so the
/// calls the answer holds decide between `stop` and `tool_calls`.
pub fn finish_reason(reason: &str, has_tool_calls: bool) -> &'static str {
    match reason {
        "MAX_TOKENS" => "length",
        r if is_refusal_reason(r) => "content_filter",
        // STOP, and reasons with no OpenAI equivalent (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL).
        _ if has_tool_calls => "tool_calls",
        _ => "stop",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_names_the_model_and_a_stream_asks_for_sse() {
        assert_eq!(
            path("gemini-2.5-flash", false),
            "models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            path("models/gemini-2.5-flash", true),
            "models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
    }

    #[test]
    fn a_model_id_outside_the_unreserved_set_is_percent_encoded() {
        assert_eq!(
            path("tuned/x?y z#é", false),
            "models/tuned%2Fx%3Fy%20z%23%C3%A9:generateContent"
        );
        assert_eq!(path("a_b.c~d-1", false), "models/a_b.c~d-1:generateContent");
    }

    #[test]
    fn function_calls_finish_as_tool_calls_and_filters_as_content_filter() {
        assert_eq!(finish_reason("STOP", false), "stop");
        assert_eq!(finish_reason("STOP", true), "tool_calls");
        assert_eq!(finish_reason("MAX_TOKENS", true), "length");
        for r in REFUSALS {
            assert_eq!(finish_reason(r, false), "content_filter", "{r}");
        }
        assert_eq!(finish_reason("MALFORMED_FUNCTION_CALL", false), "stop");
        assert_eq!(finish_reason("OTHER", false), "stop");
    }
}
