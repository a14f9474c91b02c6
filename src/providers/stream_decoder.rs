//! Turns a provider's stream into OpenAI `chat.completion.chunk` events, chunk by chunk, and
//! says what its end adds (a family that sends no `[DONE]` of its own completes on the body's
//! close).

use super::{anthropic, bedrock, gemini, Dialect};

#[derive(Debug)]
pub enum StreamDecoder {
    /// Already OpenAI-shaped: bytes pass through untouched.
    Openai,
    Anthropic(Box<anthropic::stream::Translator>),
    /// A Messages stream passed to a Messages caller as sent, marked `[DONE]` for the relay.
    AnthropicNative(Box<anthropic::native::NativeDecoder>),
    Gemini(Box<gemini::stream::Translator>),
    /// Bedrock's binary event stream.
    Bedrock(Box<bedrock::stream::Translator>),
}

impl StreamDecoder {
    /// The decoder of a `dialect` stream of `model`, its chunks stamped `created` (epoch s).
    pub fn new(dialect: Dialect, model: &str, created: u64) -> Self {
        match dialect {
            Dialect::Openai => Self::Openai,
            Dialect::Anthropic => Self::Anthropic(Box::default()),
            Dialect::Gemini => Self::Gemini(Box::new(gemini::stream::Translator::new(created))),
            Dialect::Bedrock => Self::Bedrock(Box::new(bedrock::stream::Translator::new(
                format!("chatcmpl-bedrock-{created}"),
                model.to_owned(),
            ))),
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
    /// for a decoder that holds none, or whose bytes are not events yet (Bedrock's frames).
    pub fn take_pending(&mut self) -> Vec<u8> {
        match self {
            Self::AnthropicNative(d) => d.take_pending(),
            _ => Vec::new(),
        }
    }

    pub fn decode(&mut self, chunk: Vec<u8>) -> Vec<u8> {
        match self {
            Self::Openai => chunk,
            Self::Anthropic(t) => t.push(&chunk),
            Self::AnthropicNative(d) => d.push(&chunk),
            Self::Gemini(t) => t.push(&chunk),
            Self::Bedrock(t) => t.push(&chunk),
        }
    }

    /// What the body's close adds: a finished Gemini or Bedrock answer's last events and
    /// `[DONE]` (neither family sends one); nothing for the families that end in-band.
    pub fn end(&mut self) -> Vec<u8> {
        match self {
            Self::Gemini(t) => t.end(),
            Self::Bedrock(t) => t.end(),
            _ => Vec::new(),
        }
    }
}
