//! Caller surfaces besides chat completions: each is a thin translation at the edge of
//! the one cascade. A request is read into an `Inbound` (which keeps the body as raw fields), each
//! candidate gets the body its provider family speaks, and the answer leaves in the surface's own
//! shape. Everything here is pure; the wasm edge only wires it.

pub mod agent;
pub mod count_tokens;
pub mod errors;
pub mod facts;
pub mod inbound;
pub mod messages_request;
pub mod messages_response;
pub mod messages_stream;
mod native_body;
pub mod output;
pub mod prefix;
pub mod responses_request;
pub mod responses_response;
pub mod responses_stream;
pub mod task;

pub use inbound::Inbound;
pub use output::Encoder;

/// Which API the caller speaks; named in the log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Chat,
    Messages,
    Responses,
    Embeddings,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat_completions",
            Self::Messages => "messages",
            Self::Responses => "responses",
            Self::Embeddings => "embeddings",
        }
    }

    /// The surface a path belongs to, so even a refusal before routing (a wrong method, say)
    /// comes back in the shape that caller's SDK reads.
    pub fn for_path(path: &str) -> Self {
        match path.trim_end_matches('/') {
            "/v1/messages" | "/v1/messages/count_tokens" => Self::Messages,
            "/v1/responses" => Self::Responses,
            "/v1/embeddings" => Self::Embeddings,
            _ => Self::Chat,
        }
    }

    /// The surface a `POST` to `route` is served on when it is a model call (chat completions,
    /// messages, responses, embeddings); `None` for every other route.
    pub fn of_call(route: &crate::api::Endpoint) -> Option<Self> {
        use crate::api::Endpoint;
        match route {
            Endpoint::ChatCompletions => Some(Self::Chat),
            Endpoint::Messages => Some(Self::Messages),
            Endpoint::Responses => Some(Self::Responses),
            Endpoint::Embeddings => Some(Self::Embeddings),
            _ => None,
        }
    }

    /// The error body callers of this surface expect.
    pub fn error_json(self, err: &crate::api::ApiError) -> String {
        match self {
            Self::Messages => errors::anthropic_json(err),
            _ => err.to_json(),
        }
    }
}

/// A chat-completions answer with at least one choice, or why it is not one (the candidate then
/// failed, not the request).
pub(crate) fn chat_answer(bytes: &[u8]) -> Result<serde_json::Value, String> {
    let c: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|_| "body is not valid JSON".to_owned())?;
    if c.get("choices").and_then(|ch| ch.get(0)).is_none() {
        return Err("body has no choices".to_owned());
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::Surface;
    use crate::api::Endpoint;

    #[test]
    fn each_model_call_route_is_served_on_its_own_surface_and_no_other_route_is() {
        let call = |path: &str| Surface::of_call(&Endpoint::parse(path).unwrap());
        assert_eq!(call("/v1/chat/completions"), Some(Surface::Chat));
        assert_eq!(call("/v1/messages"), Some(Surface::Messages));
        assert_eq!(call("/v1/responses"), Some(Surface::Responses));
        assert_eq!(call("/v1/embeddings"), Some(Surface::Embeddings));
        for other in ["/v1/messages/count_tokens", "/v1/models", "/v1/health"] {
            assert_eq!(call(other), None, "{other}");
        }
    }

    #[test]
    fn a_model_call_route_answers_its_errors_in_the_shape_of_its_path() {
        for path in [
            "/v1/chat/completions",
            "/v1/messages",
            "/v1/responses",
            "/v1/embeddings",
        ] {
            let served = Surface::of_call(&Endpoint::parse(path).unwrap());
            assert_eq!(served, Some(Surface::for_path(path)), "{path}");
        }
    }
}
