//! Provider families: what one upstream attempt sends (path, headers, body) and how its answer is
//! read back into OpenAI's chat-completions shape. Pure; the edge only performs the fetch.

pub mod anthropic;
pub mod gemini;
pub mod openai;
pub mod reasoning;
pub mod refusal;

use crate::api::ChatRequest;
use crate::config::{CatalogModel, ProviderKey, ProviderKind};
use crate::usage::TokenCounts;

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
    read_answer(kind, bytes, now_s).map(|a| a.bytes)
}

/// A non-streamed answer and the tokens its upstream reported (`None`: unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub bytes: Vec<u8>,
    pub usage: Option<TokenCounts>,
}

/// `read_response` with the usage, read in the same pass that checks the body: an
/// OpenAI-compatible answer is scanned once with everything but `usage` skipped.
pub fn read_answer(kind: ProviderKind, bytes: Vec<u8>, now_s: u64) -> Result<Answer, String> {
    match kind {
        ProviderKind::Openai => {
            let usage = crate::usage::answer_usage(&bytes)?;
            Ok(Answer { bytes, usage })
        }
        ProviderKind::Anthropic => {
            anthropic::response::read(&bytes, now_s).map(|(bytes, usage)| Answer { bytes, usage })
        }
    }
}

/// Turns a provider's stream into OpenAI `chat.completion.chunk` events, chunk by chunk.
#[derive(Debug)]
pub enum StreamDecoder {
    /// Already OpenAI-shaped: bytes pass through untouched.
    Openai,
    Anthropic(Box<anthropic::stream::Translator>),
    /// A Messages stream passed to a Messages caller as sent, marked `[DONE]` for the relay.
    AnthropicNative(Box<anthropic::native::NativeDecoder>),
}

impl StreamDecoder {
    pub fn new(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::Openai => Self::Openai,
            ProviderKind::Anthropic => Self::Anthropic(Box::default()),
        }
    }

    pub fn anthropic_native() -> Self {
        Self::AnthropicNative(Box::default())
    }

    /// Whether whole events pass through untouched (OpenAI's chat events; Anthropic's to a
    /// Messages caller, but for the marker after `message_stop`).
    pub fn passes_through(&self) -> bool {
        matches!(self, Self::Openai | Self::AnthropicNative(_))
    }

    /// The part-read event this decoder holds, taken out (whoever reads on holds it now); empty
    /// for a decoder that holds none.
    pub fn take_pending(&mut self) -> Vec<u8> {
        match self {
            Self::AnthropicNative(d) => d.take_pending(),
            Self::Openai | Self::Anthropic(_) => Vec::new(),
        }
    }

    pub fn decode(&mut self, chunk: Vec<u8>) -> Vec<u8> {
        match self {
            Self::Openai => chunk,
            Self::Anthropic(t) => t.push(&chunk),
            Self::AnthropicNative(d) => d.push(&chunk),
        }
    }
}
