//! The caller-side step of a stream: what the relay forwards (chat chunks, or a native stream)
//! put into the surface's own events, one push per relayed piece.

use super::{messages_stream, responses_stream};

#[derive(Debug)]
pub enum Encoder {
    /// Chat completions (and native passthrough surfaces): the bytes as relayed.
    Identity,
    Messages(Box<messages_stream::Encoder>),
    MessagesNative(Box<messages_stream::NativeFilter>),
    Responses(Box<responses_stream::Encoder>),
}

impl Encoder {
    /// `input_estimate`: the prompt estimate `message_start` shows (`usage::estimate`).
    pub fn messages(input_estimate: u64) -> Self {
        Self::Messages(Box::new(messages_stream::Encoder::with_input_estimate(
            input_estimate,
        )))
    }

    pub fn messages_native() -> Self {
        Self::MessagesNative(Box::default())
    }

    pub fn responses() -> Self {
        Self::Responses(Box::default())
    }

    /// Whether whole plain events go to the caller as they are (the native Messages filter
    /// changes only the end marker and an error event).
    pub fn passes_plain_events(&self) -> bool {
        matches!(self, Self::Identity | Self::MessagesNative(_))
    }

    pub fn push(&mut self, bytes: Vec<u8>) -> Vec<u8> {
        match self {
            Self::Identity => bytes,
            Self::Messages(e) => e.push(&bytes),
            Self::MessagesNative(f) => f.push(&bytes),
            Self::Responses(e) => e.push(&bytes),
        }
    }
}
