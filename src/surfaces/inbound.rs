//! One caller request of any surface, and what each candidate's provider family receives for it.
//! The chat view (`chat()`) is what the cascade's provider code already speaks; a surface whose
//! requests a family understands natively (Messages to Anthropic, embeddings to OpenAI-compatible)
//! sends its own body with only the model replaced.

use super::native_body::{for_vertex, with_model};
use super::{messages_request, responses_request, Surface};
use crate::api::{ApiError, ChatRequest, ErrorKind};
use crate::config::{CatalogModel, Provider, ProviderKey, ProviderKind};
use crate::providers::{self, gemini, Answer, Dialect, Operation};

#[derive(Debug, Clone)]
pub enum Inbound {
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
        Ok(match surface {
            Surface::Chat => Self::Chat(raw),
            Surface::Messages => {
                let chat = messages_request::to_chat(&raw)?;
                let chat = ChatRequest::parse_bounded(chat, max_values.saturating_mul(2))?;
                Self::Messages { raw, chat, beta }
            }
            Surface::Responses => {
                let chat = responses_request::to_chat(&raw)?;
                Self::Responses(ChatRequest::parse_bounded(
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
                Self::Embeddings(raw)
            }
        })
    }

    pub fn surface(&self) -> Surface {
        match self {
            Self::Chat(_) => Surface::Chat,
            Self::Messages { .. } => Surface::Messages,
            Self::Responses(_) => Surface::Responses,
            Self::Embeddings(_) => Surface::Embeddings,
        }
    }

    /// The request in chat-completions terms (for embeddings, the caller's body).
    pub fn chat(&self) -> &ChatRequest {
        match self {
            Self::Chat(c) | Self::Responses(c) | Self::Embeddings(c) => c,
            Self::Messages { chat, .. } => chat,
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
            (self, dialect),
            (Self::Messages { .. }, Dialect::Anthropic) | (Self::Embeddings(_), Dialect::Openai)
        )
    }

    /// Whether a candidate of this provider can serve the request at all.
    pub fn supported(&self, provider: &Provider) -> bool {
        super::facts::endpoint(self.surface()).served_by(provider.kind)
            && match self {
                // Gemini embeds texts only: token arrays skip its candidates.
                Self::Embeddings(raw) if Dialect::of(provider) == Dialect::Gemini => {
                    let input = raw.value("input").unwrap_or_default();
                    gemini::embeddings::texts(&input).is_ok()
                }
                _ => true,
            }
    }

    /// The path after the provider's `base_url` for one call.
    pub fn path(&self, provider: &Provider, key: &ProviderKey, model: &CatalogModel) -> String {
        let op = match self {
            Self::Embeddings(_) => Operation::Embeddings,
            _ => Operation::Chat {
                stream: self.stream(),
            },
        };
        providers::address::path(provider, key, &model.upstream_model, op)
    }

    /// The upstream body for one candidate (the same for each of its keys).
    pub fn body(&self, provider: &Provider, model: &CatalogModel) -> Vec<u8> {
        let vertex = provider.kind == ProviderKind::Vertex;
        match self {
            Self::Messages { raw, .. } if self.native(Dialect::of(provider)) => {
                if vertex {
                    for_vertex(raw)
                } else {
                    with_model(raw, &model.upstream_model)
                }
            }
            Self::Embeddings(raw) if Dialect::of(provider) == Dialect::Gemini => {
                let input = raw.value("input").unwrap_or_default();
                let dimensions = raw.value("dimensions").and_then(|d| d.as_u64());
                // `supported` checked the input: the body always builds.
                gemini::embeddings::body(&model.upstream_model, &input, dimensions)
                    .unwrap_or_default()
            }
            Self::Embeddings(raw) => with_model(raw, &model.upstream_model),
            _ => providers::body(provider, model, self.chat()),
        }
    }

    /// Headers beyond the family's own: `anthropic-beta` reaches Anthropic-shaped providers only.
    pub fn extra_headers(&self, dialect: Dialect) -> Option<(&'static str, &str)> {
        match self {
            Self::Messages {
                beta: Some(beta), ..
            } if dialect == Dialect::Anthropic => Some(("anthropic-beta", beta.as_str())),
            _ => None,
        }
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
            let shaped = match self {
                Self::Embeddings(_) => v.data.is_some(),
                _ => v.kind.as_deref() == Some("message"),
            };
            if !shaped {
                return Err(format!("body is not a {} answer", self.surface().as_str()));
            }
            let usage = v.usage.and_then(crate::usage::wire::usage_counts);
            return Ok(Answer { bytes, usage });
        }
        if let (Self::Embeddings(raw), Dialect::Gemini) = (self, kind) {
            let (bytes, usage) = gemini::embeddings::read(&bytes, &raw.model)?;
            return Ok(Answer { bytes, usage });
        }
        let Answer { bytes: chat, usage } = providers::read_answer(kind, bytes, now_s)?;
        let bytes = match self {
            Self::Messages { .. } => super::messages_response::from_chat(&chat)?,
            Self::Responses(_) => super::responses_response::from_chat(&chat, now_s)?,
            _ => chat,
        };
        Ok(Answer { bytes, usage })
    }

    /// The prompt estimate (`usage::estimate`) of what this request sends: a Messages request's
    /// own body (`system`, `messages`, `tools`; what `/v1/messages/count_tokens` counts), every
    /// other surface's chat view.
    pub fn prompt_tokens(&self) -> u64 {
        match self {
            Self::Messages { raw, .. } => crate::usage::estimate::prompt_tokens(raw),
            _ => crate::usage::estimate::prompt_tokens(self.chat()),
        }
    }

    /// How the relayed (chat-shaped, or native) stream is put into this surface's events;
    /// `prompt_estimate` is `prompt_tokens()`, read once per request by the caller.
    pub fn encoder(&self, kind: Dialect, prompt_estimate: u64) -> super::Encoder {
        match self {
            Self::Messages { .. } if self.native(kind) => super::Encoder::messages_native(),
            Self::Messages { .. } => super::Encoder::messages(prompt_estimate),
            Self::Responses(_) => super::Encoder::responses(),
            _ => super::Encoder::Identity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(surface: Surface, body: &str) -> Inbound {
        Inbound::parse(surface, body.as_bytes().to_vec(), 1_000, None, None).unwrap()
    }

    #[test]
    fn embeddings_with_stream_true_are_a_400_invalid_request_naming_stream() {
        let body = r#"{"model":"m","input":"x","stream":true}"#;
        let e = Inbound::parse(Surface::Embeddings, body.into(), 1_000, None, None).unwrap_err();
        assert_eq!(e.status(), 400);
        assert_eq!(e.param(), Some("stream"));
        let v: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(v["error"]["code"], "invalid_request");
        assert_eq!(v["error"]["type"], "invalid_request_error");
        let off = parse(
            Surface::Embeddings,
            r#"{"model":"m","input":"x","stream":false}"#,
        );
        assert!(!off.stream());
    }

    #[test]
    fn embeddings_are_unsupported_on_anthropic_and_native_on_openai() {
        let e = parse(Surface::Embeddings, r#"{"model":"m","input":"x"}"#);
        let provider = |kind: &str| {
            let body = format!(
                r#"{{"kind":"{kind}","base_url":"https://x.example","keys":["k-0123456789abcdef"]}}"#
            );
            let b: crate::config::admin_body::ProviderBody =
                crate::config::admin_body::parse_body(body.as_bytes()).unwrap();
            let name = crate::config::ProviderName::parse("p").unwrap();
            b.validate(name).unwrap().resolve(|_| None).unwrap()
        };
        let (anthropic, openai) = (provider("anthropic"), provider("openai"));
        assert!(!e.supported(&anthropic));
        assert!(e.supported(&openai) && e.native(Dialect::Openai));
        let model: crate::config::admin_body::ModelBody =
            crate::config::admin_body::parse_body(br#"{"provider":"p","context_window":8000}"#)
                .unwrap();
        let model = model
            .validate(crate::config::ModelId::parse("m").unwrap())
            .unwrap();
        assert_eq!(
            e.path(&openai, openai.keys.first().unwrap(), &model),
            "embeddings"
        );
    }

    #[test]
    fn usage_is_read_from_the_upstream_answer_before_the_surface_translation() {
        let m = parse(
            Surface::Messages,
            r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}"#,
        );
        let native = r#"{"type":"message","content":[],"usage":{"input_tokens":4,"cache_read_input_tokens":10,"output_tokens":2}}"#;
        let a = m
            .read_answer(Dialect::Anthropic, native.as_bytes().to_vec(), 0)
            .unwrap();
        let want = crate::usage::TokenCounts::new(14, 2, 10);
        assert_eq!(a.usage, Some(want));
        let chat = r#"{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":10}}}"#;
        let a = m
            .read_answer(Dialect::Openai, chat.as_bytes().to_vec(), 0)
            .unwrap();
        assert_eq!(
            a.usage,
            Some(want),
            "the Messages surface from a chat answer"
        );
        let r = parse(Surface::Responses, r#"{"model":"m","input":"x"}"#);
        let a = r
            .read_answer(Dialect::Anthropic, native.as_bytes().to_vec(), 0)
            .unwrap();
        assert_eq!(
            a.usage,
            Some(want),
            "the Responses surface from a Messages answer"
        );
        let e = parse(Surface::Embeddings, r#"{"model":"m","input":"x"}"#);
        let a = e
            .read_answer(
                Dialect::Openai,
                br#"{"data":[{"embedding":[0.5]}],"usage":{"prompt_tokens":3}}"#.to_vec(),
                0,
            )
            .unwrap();
        assert_eq!(a.usage.map(|t| t.prompt), Some(3));
        let a = e
            .read_answer(Dialect::Openai, br#"{"data":[]}"#.to_vec(), 0)
            .unwrap();
        assert_eq!(a.usage, None, "no usage: unknown");
    }

    #[test]
    fn text_labelled_as_an_image_is_estimated_as_text_on_every_surface() {
        let text = "Read me as text. ".repeat(25_000);
        let at_least = crate::usage::estimate::tokens_for_bytes(text.len());
        let bodies = [
            (
                Surface::Chat,
                serde_json::json!({"model": "m", "messages": [{"role": "user",
                "content": [{"type": "image_url", "image_url": {"url": text}}]}]}),
            ),
            (
                Surface::Messages,
                serde_json::json!({"model": "m", "max_tokens": 5, "messages": [
                {"role": "user", "content": [{"type": "image", "text": text}]}]}),
            ),
            (
                Surface::Messages,
                serde_json::json!({"model": "m", "max_tokens": 5, "messages": [
                {"role": "user", "content": [{"type": "image", "source": {"type": "base64",
                    "media_type": "image/png", "data": text}}]}]}),
            ),
            (
                Surface::Responses,
                serde_json::json!({"model": "m", "input": [{"role": "user",
                "content": [{"type": "input_image", "image_url": text}]}]}),
            ),
        ];
        for (surface, body) in bodies {
            let n = parse(surface, &body.to_string()).prompt_tokens();
            assert!(n >= at_least, "{surface:?}: {n} < {at_least}");
        }
    }

    #[test]
    fn a_native_answer_of_the_wrong_shape_is_the_candidates_failure() {
        let m = parse(
            Surface::Messages,
            r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}"#,
        );
        let read = |b: &str| m.read_response(Dialect::Anthropic, b.as_bytes().to_vec(), 0);
        assert!(read(r#"{"type":"message","content":[]}"#).is_ok());
        assert!(read(r#"{"type":"error"}"#).is_err());
        let e = parse(Surface::Embeddings, r#"{"model":"m","input":"x"}"#);
        assert!(e.read_response(Dialect::Openai, b"{}".to_vec(), 0).is_err());
    }
}
