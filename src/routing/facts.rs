//! What a request is, as routing rules' and restrictions' conditions read it: the `params.*` of
//! the parsed body, the client its headers name and the `metadata.*` labels of the
//! `X-CogniGate-Metadata` header. Filled once at
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
    /// `params.task`, computed only when a condition reads it.
    pub task: Option<Task>,
    /// `params.agent`, computed only when a condition reads it (or `params.task`).
    pub agent: Option<Agent>,
}

/// `params.task`: what the request is for (`surfaces::task` decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    Code,
    Chat,
}

impl Task {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Chat => "chat",
        }
    }

    /// A value as `config::condition::TASKS` lists it.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Code, Self::Chat]
            .into_iter()
            .find(|t| t.as_str() == s)
    }
}

/// `params.agent`: the client that sent the request (`surfaces::agent` detects it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Cline,
    OpenaiPython,
    OpenaiNode,
    AnthropicPython,
    AnthropicNode,
    Unknown,
}

impl Agent {
    pub const ALL: [Agent; 8] = [
        Self::ClaudeCode,
        Self::Codex,
        Self::Cline,
        Self::OpenaiPython,
        Self::OpenaiNode,
        Self::AnthropicPython,
        Self::AnthropicNode,
        Self::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::Cline => "cline",
            Self::OpenaiPython => "openai-python",
            Self::OpenaiNode => "openai-node",
            Self::AnthropicPython => "anthropic-python",
            Self::AnthropicNode => "anthropic-node",
            Self::Unknown => "unknown",
        }
    }

    /// A value as `config::condition::AGENTS` lists it.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// A coding agent: its requests are `params.task: code` whatever they hold.
    pub fn codes(self) -> bool {
        matches!(self, Self::ClaudeCode | Self::Codex | Self::Cline)
    }
}
