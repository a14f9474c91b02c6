//! Provider families: what one upstream attempt sends (path, headers, body) and how its answer is
//! read back into OpenAI's chat-completions shape. Pure; the edge only performs the fetch.

pub mod address;
pub mod anthropic;
pub mod bedrock;
pub mod chat_chunk;
pub mod credentials;
pub mod dialect;
pub mod error_class;
pub mod gemini;
pub mod google_token;
pub mod openai;
pub mod prompt_cache;
pub mod reasoning;
pub mod refusal;
pub mod stream_decoder;
pub mod turns;

pub use address::Operation;
pub use dialect::Dialect;
pub use error_class::ErrorClass;
pub use stream_decoder::StreamDecoder;

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
