//! The request and answer shapes a provider speaks, whatever its kind: Azure OpenAI speaks
//! OpenAI's, Vertex speaks Anthropic's or Gemini's by publisher. Everything that reads or writes a
//! body asks the dialect; only addresses and credentials ask the kind.

use crate::config::{Provider, ProviderKind, Publisher};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// OpenAI's chat completions (OpenAI, Azure OpenAI, every compatible API).
    Openai,
    /// Anthropic's Messages (Anthropic, Vertex with `publisher: anthropic`).
    Anthropic,
    /// Google's `generateContent` (the Gemini API, Vertex with `publisher: google`).
    Gemini,
    /// Bedrock's Converse.
    Bedrock,
}

impl Dialect {
    pub fn of(provider: &Provider) -> Self {
        match provider.kind {
            ProviderKind::Openai | ProviderKind::AzureOpenai => Self::Openai,
            ProviderKind::Anthropic => Self::Anthropic,
            ProviderKind::Vertex => match provider.cloud.publisher {
                Some(Publisher::Google) => Self::Gemini,
                _ => Self::Anthropic,
            },
            ProviderKind::Gemini => Self::Gemini,
            ProviderKind::Bedrock => Self::Bedrock,
        }
    }
}
