//! Provider families: what one upstream attempt sends (path, headers, body) and how its answer is
//! read back into OpenAI's chat-completions shape. Pure; the edge only performs the fetch.

pub mod address;
pub mod anthropic;
pub mod bedrock;
pub mod credentials;
pub mod dialect;
pub mod error_class;
pub mod gemini;
pub mod openai;
pub mod reasoning;
pub mod refusal;

pub use address::Operation;
pub use dialect::Dialect;
pub use error_class::ErrorClass;

use crate::api::ChatRequest;
use crate::config::{CatalogModel, Provider, ProviderKey, ProviderKind};
use crate::usage::TokenCounts;

/// One upstream request, ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// Appended to the provider's base URL.
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// One chat call of a candidate with a `Header` key (`credentials::KeyUse`): its path, content
/// and credential headers, and body.
pub fn prepare(
    provider: &Provider,
    model: &CatalogModel,
    key: &ProviderKey,
    req: &ChatRequest,
) -> Prepared {
    let op = Operation::Chat { stream: req.stream };
    let mut headers: Vec<(&'static str, String)> = content_headers(req)
        .iter()
        .map(|(k, v)| (*k, (*v).to_owned()))
        .collect();
    headers.extend(credentials::key_headers(provider, key, None));
    Prepared {
        path: address::path(provider, key, &model.upstream_model, op),
        headers,
        body: body(provider, model, req),
    }
}

/// The request body for `model`, the same for every key of its provider.
pub fn body(provider: &Provider, model: &CatalogModel, req: &ChatRequest) -> Vec<u8> {
    match Dialect::of(provider) {
        Dialect::Openai => openai::body(model, req),
        Dialect::Anthropic if provider.kind == ProviderKind::Vertex => {
            anthropic::request::vertex_body(model, req)
        }
        Dialect::Anthropic => anthropic::request::body(model, req),
        Dialect::Gemini => gemini::request::body(model, req),
        Dialect::Bedrock => bedrock::request::body(model, req),
    }
}

/// Whether this build can call a provider of the dialect at all.
pub fn served(dialect: Dialect) -> bool {
    matches!(dialect, Dialect::Openai | Dialect::Anthropic)
}

/// The content headers of a call: what it sends and what it takes back.
pub fn content_headers(req: &ChatRequest) -> [(&'static str, &'static str); 2] {
    let accept = if req.stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    [("content-type", "application/json"), ("accept", accept)]
}

/// A non-streamed 2xx body in OpenAI's shape, or why it cannot be one (the provider is then
/// treated as failing, not the request). `now_s` stamps translated answers.
pub fn read_response(dialect: Dialect, bytes: Vec<u8>, now_s: u64) -> Result<Vec<u8>, String> {
    read_answer(dialect, bytes, now_s).map(|a| a.bytes)
}

/// A non-streamed answer and the tokens its upstream reported (`None`: unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub bytes: Vec<u8>,
    pub usage: Option<TokenCounts>,
}

/// `read_response` with the usage, read in the same pass that checks the body: an
/// OpenAI-compatible answer is scanned once with everything but `usage` skipped.
pub fn read_answer(dialect: Dialect, bytes: Vec<u8>, now_s: u64) -> Result<Answer, String> {
    let read = match dialect {
        Dialect::Openai => {
            let usage = crate::usage::answer_usage(&bytes)?;
            return Ok(Answer { bytes, usage });
        }
        Dialect::Anthropic => anthropic::response::read(&bytes, now_s),
        Dialect::Gemini => gemini::response::read(&bytes, now_s),
        Dialect::Bedrock => bedrock::response::read(&bytes, now_s),
    };
    read.map(|(bytes, usage)| Answer { bytes, usage })
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
    pub fn new(dialect: Dialect) -> Self {
        match dialect {
            Dialect::Anthropic => Self::Anthropic(Box::default()),
            // Never asked for the rest: `served` keeps requests away from them.
            Dialect::Openai | Dialect::Gemini | Dialect::Bedrock => Self::Openai,
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
