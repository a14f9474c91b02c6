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

pub fn prepare(
    kind: ProviderKind,
    model: &CatalogModel,
    key: &ProviderKey,
    req: &ChatRequest,
) -> Prepared {
    let accept = if req.stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    match kind {
        ProviderKind::Openai => Prepared {
            path: "chat/completions",
            headers: vec![
                ("authorization", format!("Bearer {}", key.secret.expose())),
                ("accept", accept.to_owned()),
            ],
            body: serde_json::to_vec(&openai::body(model, req)).unwrap_or_default(),
        },
        ProviderKind::Anthropic => Prepared {
            path: "messages",
            headers: vec![
                ("x-api-key", key.secret.expose().to_owned()),
                ("anthropic-version", anthropic::API_VERSION.to_owned()),
                ("accept", accept.to_owned()),
            ],
            body: serde_json::to_vec(&anthropic::request::body(model, req)).unwrap_or_default(),
        },
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

    pub fn decode(&mut self, chunk: Vec<u8>) -> Vec<u8> {
        match self {
            Self::Openai => chunk,
            Self::Anthropic(t) => t.push(&chunk),
        }
    }
}
