//! One caller request of any surface, and what each candidate's provider family receives for it.
//! The chat view (`chat()`) is what the cascade's provider code already speaks; a surface whose
//! requests a family understands natively (Messages to Anthropic, embeddings to OpenAI-compatible)
//! sends its own body with only the model replaced.

use super::native_body::{for_vertex, with_model};
use super::{messages_request, responses_request, Surface};
use crate::api::{ApiError, ChatRequest, ErrorKind};
use crate::config::{CacheTtl, CatalogModel, Provider, ProviderKey, ProviderKind};
use crate::providers::{self, gemini, prompt_cache, Answer, Dialect, Operation};

/// A caller request, and the prompt-cache marks its route injects (`None`: sent as built).
#[derive(Debug, Clone)]
pub struct Inbound {
    sent: Sent,
    prompt_cache: Option<CacheTtl>,
}

/// The request as its surface sent it.
#[derive(Debug, Clone)]
pub enum Sent {
    Chat(ChatRequest),
    /// `raw` is the caller's Messages body (fields as sent); `chat` its chat-completions
    /// translation for OpenAI-compatible candidates.
    Messages {
        raw: ChatRequest,
        chat: ChatRequest,
        beta: Option<String>,
    },
    /// Translated to chat completions once; every family is served from that.
    Responses(ChatRequest),
    /// The caller's body, for OpenAI-compatible candidates only.
    Embeddings(ChatRequest),
}

impl Inbound {
    /// `beta` is the caller's `anthropic-beta` header (Messages only); `default_model` the
    /// tenant's name for a request without `model`.
    pub fn parse(
        surface: Surface,
        body: Vec<u8>,
        max_values: usize,
        beta: Option<String>,
        default_model: Option<&str>,
    ) -> Result<Self, ApiError> {
        let raw = ChatRequest::parse_with_default(body, max_values, default_model)?;
        Self::of_request(surface, raw, max_values, beta)
    }

    /// The request of `surface` from the caller's body once parsed, and so past its depth and
    /// value limits (`ChatRequest::parse_with_default`), which a feature reading the body as
    /// sent (the response cache's digest) needs first; `max_values` bounds a translation.
    pub fn of_request(
        surface: Surface,
        raw: ChatRequest,
        max_values: usize,
        beta: Option<String>,
    ) -> Result<Self, ApiError> {
        let sent = match surface {
            Surface::Chat => Sent::Chat(raw),
            Surface::Messages => {
                let chat = messages_request::to_chat(&raw)?;
                let chat = ChatRequest::parse_bounded(chat, max_values.saturating_mul(2))?;
                Sent::Messages { raw, chat, beta }
            }
            Surface::Responses => {
                let chat = responses_request::to_chat(&raw)?;
                Sent::Responses(ChatRequest::parse_bounded(
                    chat,
                    max_values.saturating_mul(2),
                )?)
            }
            Surface::Embeddings => {
                // Embeddings have no streamed form: refused here, the request is never sent, so
                // no upstream's non-SSE answer can be read as a broken stream and count against
                // a breaker.
                if raw.stream {
                    return Err(ApiError::new(
                        ErrorKind::InvalidRequest,
                        "Embeddings cannot be streamed: 'stream' must be false or absent.",
                    )
                    .with_param("stream"));
                }
                if raw.raw("input").is_none() {
                    return Err(
                        ApiError::new(ErrorKind::MissingInput, "'input' is required.")
                            .with_param("input"),
                    );
                }
                Sent::Embeddings(raw)
            }
        };
        Ok(Self {
            sent,
            prompt_cache: None,
        })
    }

    pub fn surface(&self) -> Surface {
        match &self.sent {
            Sent::Chat(_) => Surface::Chat,
            Sent::Messages { .. } => Surface::Messages,
            Sent::Responses(_) => Surface::Responses,
            Sent::Embeddings(_) => Surface::Embeddings,
        }
    }

    /// The request in chat-completions terms (for embeddings, the caller's body).
    pub fn chat(&self) -> &ChatRequest {
        match &self.sent {
            Sent::Chat(c) | Sent::Responses(c) | Sent::Embeddings(c) => c,
            Sent::Messages { chat, .. } => chat,
        }
    }

    pub fn model(&self) -> &str {
        &self.chat().model
    }

    pub fn stream(&self) -> bool {
        self.chat().stream
    }

    /// The family answers in this surface's own shape, so its answer passes through unchanged.
    pub fn native(&self, dialect: Dialect) -> bool {
        matches!(
            (&self.sent, dialect),
            (Sent::Messages { .. }, Dialect::Anthropic) | (Sent::Embeddings(_), Dialect::Openai)
        )
    }

    /// Whether a candidate of this provider can serve the request at all.
    pub fn supported(&self, provider: &Provider) -> bool {
        super::facts::endpoint(self.surface()).served_by(provider.kind)
            && match &self.sent {
                // Gemini embeds texts only: token arrays skip its candidates.
                Sent::Embeddings(raw) if Dialect::of(provider) == Dialect::Gemini => {
                    let input = raw.value("input").unwrap_or_default();
                    gemini::embeddings::texts(&input).is_ok()
                }
                _ => true,
            }
    }

    /// The path after the provider's `base_url` for one call.
    pub fn path(&self, provider: &Provider, key: &ProviderKey, model: &CatalogModel) -> String {
        let op = match &self.sent {
            Sent::Embeddings(_) => Operation::Embeddings,
            _ => Operation::Chat {
                stream: self.stream(),
            },
        };
        providers::address::path(provider, key, &model.upstream_model, op)
    }

    /// The request with its route's prompt-cache injection: `None`, or a request that marks
    /// anything of its own (`providers::prompt_cache::carries_marks`), is sent as built.
    /// The request is read for marks only when the route injects: a route without the setting
    /// costs no scan of the body.
    pub fn injecting(self, ttl: Option<CacheTtl>) -> Self {
        let own = |r: &ChatRequest| prompt_cache::carries_marks(r.fields());
        let unmarked = |_: &CacheTtl| match &self.sent {
            Sent::Messages { raw, .. } => !own(raw),
            _ => !own(self.chat()),
        };
        let prompt_cache = ttl.filter(unmarked);
        Self {
            prompt_cache,
            ..self
        }
    }

    /// The upstream body for one candidate (the same for each of its keys), with the route's
    /// prompt-cache marks where its family takes them.
    pub fn body(&self, provider: &Provider, model: &CatalogModel) -> Vec<u8> {
        let body = self.body_as_sent(provider, model);
        self.with_marks(provider, model, body)
    }

    /// The body of `chat` (this request fitted to a context window) for one candidate, marked
    /// like `body`.
    pub fn fitted_body(
        &self,
        provider: &Provider,
        model: &CatalogModel,
        chat: &ChatRequest,
    ) -> Vec<u8> {
        let body = providers::body(provider, model, chat);
        self.with_marks(provider, model, body)
    }

    fn with_marks(&self, provider: &Provider, model: &CatalogModel, body: Vec<u8>) -> Vec<u8> {
        match self.prompt_cache {
            Some(ttl) => prompt_cache::inject(Dialect::of(provider), model, ttl, body),
            None => body,
        }
    }

    fn body_as_sent(&self, provider: &Provider, model: &CatalogModel) -> Vec<u8> {
        let vertex = provider.kind == ProviderKind::Vertex;
        match &self.sent {
            Sent::Messages { raw, .. } if self.native(Dialect::of(provider)) => {
                if vertex {
                    for_vertex(raw)
                } else {
                    with_model(raw, &model.upstream_model)
                }
            }
            Sent::Embeddings(raw) if Dialect::of(provider) == Dialect::Gemini => {
                let input = raw.value("input").unwrap_or_default();
                let dimensions = raw.value("dimensions").and_then(|d| d.as_u64());
                // `supported` checked the input: the body always builds.
                gemini::embeddings::body(&model.upstream_model, &input, dimensions)
                    .unwrap_or_default()
            }
            Sent::Embeddings(raw) => with_model(raw, &model.upstream_model),
            _ => providers::body(provider, model, self.chat()),
        }
    }

    /// Headers beyond the family's own: `anthropic-beta` reaches Anthropic-shaped providers only,
    /// with the 1-hour cache tier's value merged in when the route injects 1-hour marks.
    pub fn extra_headers(&self, dialect: Dialect) -> Option<(&'static str, String)> {
        if dialect != Dialect::Anthropic {
            return None;
        }
        let beta = match &self.sent {
            Sent::Messages { beta, .. } => beta.as_deref(),
            _ => None,
        };
        let beta = match self.prompt_cache {
            Some(CacheTtl::OneHour) => Some(prompt_cache::merged_beta(beta)),
            _ => beta.map(str::to_owned),
        };
        beta.map(|b| ("anthropic-beta", b))
    }

    /// A non-streamed 2xx body in this surface's shape, or why it cannot be one (the candidate
    /// then failed, not the request).
    pub fn read_response(
        &self,
        kind: Dialect,
        bytes: Vec<u8>,
        now_s: u64,
    ) -> Result<Vec<u8>, String> {
        self.read_answer(kind, bytes, now_s).map(|a| a.bytes)
    }

    /// `read_response` with the tokens the upstream reported, read from the upstream's answer
    /// before any surface translation (so every surface is metered the same way).
    pub fn read_answer(&self, kind: Dialect, bytes: Vec<u8>, now_s: u64) -> Result<Answer, String> {
        if self.native(kind) {
            // Only the fields that tell the shape, and `usage`, are read; the rest (an
            // embeddings answer is mostly numbers) is skipped without building a tree.
            #[derive(serde::Deserialize)]
            struct Shape<'a> {
                #[serde(rename = "type", borrow)]
                kind: Option<std::borrow::Cow<'a, str>>,
                data: Option<Vec<serde::de::IgnoredAny>>,
                #[serde(borrow)]
                usage: Option<&'a serde_json::value::RawValue>,
            }
            let v: Shape<'_> =
                serde_json::from_slice(&bytes).map_err(|_| "body is not valid JSON".to_owned())?;
            let shaped = match &self.sent {
                Sent::Embeddings(_) => v.data.is_some(),
                _ => v.kind.as_deref() == Some("message"),
            };
            if !shaped {
                return Err(format!("body is not a {} answer", self.surface().as_str()));
            }
            let usage = v.usage.and_then(crate::usage::wire::usage_counts);
            return Ok(Answer { bytes, usage });
        }
        if let (Sent::Embeddings(raw), Dialect::Gemini) = (&self.sent, kind) {
            let (bytes, usage) = gemini::embeddings::read(&bytes, &raw.model)?;
            return Ok(Answer { bytes, usage });
        }
        let Answer { bytes: chat, usage } = providers::read_answer(kind, bytes, now_s)?;
        let bytes = match &self.sent {
            Sent::Messages { .. } => super::messages_response::from_chat(&chat)?,
            Sent::Responses(_) => super::responses_response::from_chat(&chat, now_s)?,
            _ => chat,
        };
        Ok(Answer { bytes, usage })
    }

    /// The prompt estimate (`usage::estimate`) of what this request sends: a Messages request's
    /// own body (`system`, `messages`, `tools`; what `/v1/messages/count_tokens` counts), every
    /// other surface's chat view.
    pub fn prompt_tokens(&self) -> u64 {
        match &self.sent {
            Sent::Messages { raw, .. } => crate::usage::estimate::prompt_tokens(raw),
            _ => crate::usage::estimate::prompt_tokens(self.chat()),
        }
    }

    /// How the relayed (chat-shaped, or native) stream is put into this surface's events;
    /// `prompt_estimate` is `prompt_tokens()`, read once per request by the caller.
    pub fn encoder(&self, kind: Dialect, prompt_estimate: u64) -> super::Encoder {
        match &self.sent {
            Sent::Messages { .. } if self.native(kind) => super::Encoder::messages_native(),
            Sent::Messages { .. } => super::Encoder::messages(prompt_estimate),
            Sent::Responses(_) => super::Encoder::responses(),
            _ => super::Encoder::Identity,
        }
    }
}

#[cfg(test)]
#[path = "inbound_tests.rs"]
mod tests;
