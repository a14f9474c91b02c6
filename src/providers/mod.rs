//! Provider families: what one upstream attempt sends (path, headers, body) and how its answer is
//! read back into OpenAI's chat-completions shape. Pure; the edge only performs the fetch.

pub mod anthropic;
pub mod openai;
pub mod reasoning;

use crate::api::ChatRequest;
use crate::config::{CatalogModel, ProviderKey, ProviderKind};

/// One upstream request, ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// Appended to the provider's base URL.
    pub path: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// One candidate's request: the body is built once per candidate (it may be megabytes), the
/// headers once per key.
pub fn prepare(
    kind: ProviderKind,
    model: &CatalogModel,
    key: &ProviderKey,
    req: &ChatRequest,
) -> Prepared {
    Prepared {
        path: path(kind),
        headers: headers(kind, key, req),
        body: body(kind, model, req),
    }
}

/// Appended to the provider's base URL.
pub fn path(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Openai => "chat/completions",
        ProviderKind::Anthropic => "messages",
    }
}

/// The request body for `model`, the same for every key of its provider.
pub fn body(kind: ProviderKind, model: &CatalogModel, req: &ChatRequest) -> Vec<u8> {
    match kind {
        ProviderKind::Openai => openai::body(model, req),
        ProviderKind::Anthropic => anthropic::request::body(model, req),
    }
}

/// The credential and content headers for one key.
pub fn headers(
    kind: ProviderKind,
    key: &ProviderKey,
    req: &ChatRequest,
) -> Vec<(&'static str, String)> {
    let accept = if req.stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    match kind {
        ProviderKind::Openai => vec![
            ("authorization", format!("Bearer {}", key.secret.expose())),
            ("accept", accept.to_owned()),
        ],
        ProviderKind::Anthropic => vec![
            ("x-api-key", key.secret.expose().to_owned()),
            ("anthropic-version", anthropic::API_VERSION.to_owned()),
            ("accept", accept.to_owned()),
        ],
    }
}

/// A non-streamed 2xx body in OpenAI's shape, or why it cannot be one (the provider is then
/// treated as failing, not the request). `now_s` stamps translated answers.
pub fn read_response(kind: ProviderKind, bytes: Vec<u8>, now_s: u64) -> Result<Vec<u8>, String> {
    match kind {
        ProviderKind::Openai => serde_json::from_slice::<serde::de::IgnoredAny>(&bytes)
            .map(|_| bytes)
            .map_err(|_| "body is not valid JSON".to_owned()),
        ProviderKind::Anthropic => anthropic::response::to_openai(&bytes, now_s),
    }
}

/// Turns a provider's stream into OpenAI `chat.completion.chunk` events, chunk by chunk.
#[derive(Debug)]
pub enum StreamDecoder {
    /// Already OpenAI-shaped: bytes pass through untouched.
    Openai,
    Anthropic(Box<anthropic::stream::Translator>),
    /// A Messages stream passed to a Messages caller as sent, marked `[DONE]` for the relay.
    AnthropicNative(Box<crate::surfaces::messages_stream::NativeDecoder>),
}

impl StreamDecoder {
    pub fn new(kind: ProviderKind, req: &ChatRequest) -> Self {
        match kind {
            ProviderKind::Openai => Self::Openai,
            ProviderKind::Anthropic => Self::Anthropic(Box::new(
                anthropic::stream::Translator::new(anthropic::stream::wants_usage(req)),
            )),
        }
    }

    pub fn anthropic_native() -> Self {
        Self::AnthropicNative(Box::default())
    }

    pub fn decode(&mut self, chunk: Vec<u8>) -> Vec<u8> {
        match self {
            Self::Openai => chunk,
            Self::Anthropic(t) => t.push(&chunk),
            Self::AnthropicNative(d) => d.push(&chunk),
        }
    }
}
