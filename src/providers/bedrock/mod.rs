//! AWS Bedrock's Converse API behind OpenAI's chat-completions shape. Pure: the path, the
//! credentials and their SigV4 signature, the request body, and the answer read back (a JSON body,
//! or an AWS event stream of binary frames). The edge only performs the fetch.

pub mod errors;
pub mod event_stream;
pub mod key;
mod messages;
pub mod request;
pub mod response;
pub mod sigv4;
pub mod stream;
pub mod tools;

#[cfg(test)]
mod test_frames;

pub use key::BedrockKey;

/// `maxTokens` when neither the request nor the model sets one (the same default as Anthropic's,
/// whose models most Bedrock chains serve).
pub const DEFAULT_MAX_TOKENS: u64 = 4_096;

/// The service name SigV4 signs for.
pub const SERVICE: &str = "bedrock";

/// The body's media type, sent and signed.
pub const CONTENT_TYPE: &str = "application/json";

/// Appended to the provider's base URL (an origin): the model id is one path segment, so every
/// character but RFC 3986's unreserved ones is percent-encoded (`:` in versioned ids, `/` in
/// inference-profile ARNs).
pub fn path(upstream_model: &str, stream: bool) -> String {
    let op = if stream {
        "converse-stream"
    } else {
        "converse"
    };
    format!(
        "model/{}/{op}",
        super::address::encode(upstream_model, false)
    )
}

/// `stopReason` → `finish_reason`; `None` for the reasons that mean the model's output was
/// unusable (`malformed_model_output`, `malformed_tool_use`): the candidate then fails as a server.
pub fn finish_reason(stop_reason: &str) -> Option<&'static str> {
    Some(match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "content_filtered" | "guardrail_intervened" => "content_filter",
        "malformed_model_output" | "malformed_tool_use" => return None,
        // end_turn, stop_sequence, and reasons added later.
        _ => "stop",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_id_is_one_percent_encoded_path_segment() {
        assert_eq!(
            path("anthropic.claude-3-5-sonnet-20240620-v1:0", false),
            "model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
        );
        assert_eq!(
            path("arn:aws:bedrock:us-east-1:1:inference-profile/us.x~y", true),
            "model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.x~y/converse-stream"
        );
    }

    #[test]
    fn stop_reasons_map_to_openai_finish_reasons_and_malformed_output_is_none() {
        for (stop, finish) in [
            ("end_turn", Some("stop")),
            ("stop_sequence", Some("stop")),
            ("max_tokens", Some("length")),
            ("model_context_window_exceeded", Some("length")),
            ("tool_use", Some("tool_calls")),
            ("content_filtered", Some("content_filter")),
            ("guardrail_intervened", Some("content_filter")),
            ("malformed_model_output", None),
            ("malformed_tool_use", None),
        ] {
            assert_eq!(finish_reason(stop), finish, "{stop}");
        }
    }
}
