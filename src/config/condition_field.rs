//! The fields a rule condition reads (`config::condition`), and what each admits: a string, a
//! flag, a number, or one value of a closed set (`params.endpoint`, `params.task`,
//! `params.agent`), so a condition naming a value the gateway never produces is refused when it
//! is written rather than never matching.

use super::condition::MAX_METADATA_KEY;

/// What a request field is, for the operators it admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Str,
    Bool,
    Num,
    /// A string from a closed set.
    OneOf(&'static [&'static str]),
}

/// The closed set of `params.endpoint` values (`embeddings` too: it is a surface that routes).
pub const ENDPOINTS: [&str; 4] = ["chat", "messages", "responses", "embeddings"];

/// The closed set of `params.task` values (`surfaces::task` decides which).
pub const TASKS: [&str; 2] = ["code", "chat"];

/// The closed set of `params.agent` values (`surfaces::agent` detects which): only clients with
/// a signal of their own, and `unknown` for every other.
pub const AGENTS: [&str; 8] = [
    "claude-code",
    "codex",
    "cline",
    "openai-python",
    "openai-node",
    "anthropic-python",
    "anthropic-node",
    "unknown",
];

/// The keys a condition may name, as its refusal lists them.
pub const KEYS: &str = "params.model, params.stream, params.tools, params.max_tokens, \
    params.has_images, params.endpoint, params.task, params.agent or metadata.<key>";

/// A field a condition reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    Model,
    Stream,
    Tools,
    MaxTokens,
    HasImages,
    Endpoint,
    /// `code` or `chat`.
    Task,
    /// The detected client.
    Agent,
    Metadata(String),
}

impl Field {
    pub(super) fn parse(key: &str) -> Option<Self> {
        Some(match key {
            "params.model" => Self::Model,
            "params.stream" => Self::Stream,
            "params.tools" => Self::Tools,
            "params.max_tokens" => Self::MaxTokens,
            "params.has_images" => Self::HasImages,
            "params.endpoint" => Self::Endpoint,
            "params.task" => Self::Task,
            "params.agent" => Self::Agent,
            _ => {
                let k = key.strip_prefix("metadata.")?;
                let printable = k.chars().all(|c| !c.is_control());
                if k.is_empty() || k.len() > MAX_METADATA_KEY || !printable {
                    return None;
                }
                Self::Metadata(k.to_owned())
            }
        })
    }

    pub(super) fn kind(&self) -> Kind {
        match self {
            Self::Model | Self::Metadata(_) => Kind::Str,
            Self::Stream | Self::Tools | Self::HasImages => Kind::Bool,
            Self::MaxTokens => Kind::Num,
            Self::Endpoint => Kind::OneOf(&ENDPOINTS),
            Self::Task => Kind::OneOf(&TASKS),
            Self::Agent => Kind::OneOf(&AGENTS),
        }
    }
}
