//! What a request is, as routing rules' conditions read it: the `params.*` of the
//! parsed body and the `metadata.*` labels of the `X-CogniGate-Metadata` header. Filled once at
//! the boundary (surfaces and edge), read by the condition evaluator.

use crate::config::ProviderKind;
use crate::config::SortedMap;

/// The caller surface a request came in on (`params.endpoint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Chat,
    Messages,
    Responses,
    Embeddings,
}

impl Endpoint {
    /// Whether a provider of this family can serve the endpoint (an Anthropic provider has no
    /// embeddings): the cascade's and `explain`'s `capability` skip.
    pub fn served_by(self, kind: ProviderKind) -> bool {
        match self {
            // Embeddings go to OpenAI's shape (OpenAI, Azure OpenAI) and the Gemini API's
            // `batchEmbedContents`. Anthropic and Bedrock's Converse have none, and Vertex's
            // embeddings are another API (`:predict`), not called.
            Self::Embeddings => matches!(
                kind,
                ProviderKind::Openai | ProviderKind::AzureOpenai | ProviderKind::Gemini
            ),
            Self::Chat | Self::Messages | Self::Responses => true,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Messages => "messages",
            Self::Responses => "responses",
            Self::Embeddings => "embeddings",
        }
    }
}

/// One request's facts. `metadata` is untrusted caller input: it can only choose among the
/// tenant's own rules.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFacts {
    /// The requested name, as sent (`params.model`).
    pub model: String,
    pub stream: bool,
    /// Tools declared (`params.tools`).
    pub tools: bool,
    pub max_tokens: Option<u64>,
    pub has_images: bool,
    pub endpoint: Endpoint,
    pub metadata: SortedMap<String, String>,
}
