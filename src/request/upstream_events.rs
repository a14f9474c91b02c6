//! A streamed answer's upstream side, as the relay reads it: the provider's decoder puts the
//! bytes in chat (or marked native) events, then the relay frames, meters and ends them.
//!
//! When whole events pass through the decoder untouched, the runtime may write plain events as
//! they came and hand them over later (`read_passed`): only the first parser on the way ever
//! holds a part-read event, so `take_pending` and `read_passed` move exactly that one between
//! the two.

use crate::cascade::UpstreamReply;
use crate::providers::{Dialect, StreamDecoder};
use crate::stream::relay::ERROR_EVENT_DETAIL;
use crate::stream::{Relay, RelayStep, StreamEnd};
use crate::usage::TokenCounts;

/// How the runtime may relay a stream's middle (`UpstreamEvents::plain_middle`).
pub struct PlainMiddle {
    /// The event the relay had begun to read.
    pub held: Vec<u8>,
    /// Passed events go with every call to the relay, so the cache's copy keeps their order.
    pub with_every_step: bool,
}

pub struct UpstreamEvents {
    decoder: StreamDecoder,
    relay: Relay,
}

impl UpstreamEvents {
    pub fn new(decoder: StreamDecoder, relay: Relay) -> Self {
        Self { decoder, relay }
    }

    /// One chunk of the upstream body, decoded and relayed.
    pub fn on_chunk(&mut self, chunk: Vec<u8>) -> RelayStep {
        self.relay.on_chunk(&self.decoder.decode(chunk))
    }

    /// The upstream body ended.
    pub fn on_end(&mut self) -> RelayStep {
        ended(&mut self.decoder, &mut self.relay)
    }

    /// A read failed or timed out.
    pub fn on_failure(&mut self, detail: String) -> RelayStep {
        self.relay.on_failure(detail)
    }

    /// When whole events reach the relay as the upstream sent them and go to the caller as they
    /// are (`caller_plain`), the runtime may pass plain events as sent: then the part-read event
    /// goes to it, and with a cache copy being made (`capturing`) passed events come back with
    /// every call.
    pub fn plain_middle(&mut self, caller_plain: bool, capturing: bool) -> Option<PlainMiddle> {
        (caller_plain && self.decoder.passes_through()).then(|| PlainMiddle {
            held: self.take_pending(),
            with_every_step: capturing,
        })
    }

    /// Whether the stream's end needs the events the runtime passed: for the cache's copy, or
    /// for an estimate while the usage has not come.
    pub fn needs_passed(&self, capturing: bool) -> bool {
        capturing || self.awaits_usage()
    }

    /// The part-read event, taken out of whichever parser holds it.
    pub fn take_pending(&mut self) -> Vec<u8> {
        let mut held = self.decoder.take_pending();
        held.extend(self.relay.take_pending());
        held
    }

    /// Bytes the runtime already dealt with: whole plain events it passed as sent, or the
    /// part-read event it hands back. They are read as any chunk is (so metered the same way),
    /// and nothing of them is forwarded again.
    pub fn read_passed(&mut self, bytes: Vec<u8>) {
        let _ = self.on_chunk(bytes);
    }

    /// Whether the stream's final usage has not come yet.
    pub fn awaits_usage(&self) -> bool {
        !self.relay.usage().complete()
    }

    pub fn relay(&self) -> &Relay {
        &self.relay
    }

    /// The tokens reported so far.
    pub fn tokens(&self) -> Option<TokenCounts> {
        self.relay.tokens()
    }
}

/// The body's close, through the decoder first: what it adds (a Gemini or Bedrock answer's
/// `[DONE]`) is relayed, and only a stream still open after that is cut.
pub fn ended(decoder: &mut StreamDecoder, relay: &mut Relay) -> RelayStep {
    let tail = decoder.end();
    let forwarded = match (!tail.is_empty()).then(|| relay.on_chunk(&tail)) {
        Some(RelayStep::Forward(out)) => out,
        Some(finished) => return finished,
        None => Vec::new(),
    };
    match relay.on_end() {
        RelayStep::Finish { mut bytes, end } => {
            let mut out = forwarded;
            out.append(&mut bytes);
            RelayStep::Finish { bytes: out, end }
        }
        RelayStep::Forward(mut bytes) => {
            let mut out = forwarded;
            out.append(&mut bytes);
            RelayStep::Forward(out)
        }
    }
}

/// The body closed before the stream's first data event: the step its decoder's end makes, or
/// a broken stream (which fails over) when that leaves it cut.
pub fn closed_at_start<B>(
    decoder: &mut StreamDecoder,
    relay: &mut Relay,
    status: u16,
) -> Result<RelayStep, UpstreamReply<B>> {
    match ended(decoder, relay) {
        RelayStep::Finish {
            end: StreamEnd::Failed(_),
            ..
        } => Err(UpstreamReply::Broken {
            status,
            detail: "stream closed before its first event".to_owned(),
        }),
        step => Ok(step),
    }
}

/// A stream that failed before its first byte, as the cascade reads it: the error answer an
/// upstream error event stands for (`early_error`), or a broken stream.
pub fn failed_start<B>(dialect: Dialect, status: u16, detail: String) -> UpstreamReply<B> {
    match early_error(dialect, &detail) {
        Some((status, headers, text)) => UpstreamReply::Status {
            status,
            retry_after: None,
            headers,
            text,
        },
        None => UpstreamReply::Broken { status, detail },
    }
}

/// An error answer: its status, the headers its family is read by, and its text.
pub type ErrorAnswer = (u16, Vec<(String, String)>, String);

/// An error event before a stream's first byte, as the error answer it stands for (status,
/// the headers its family is read by, text), so the cascade reads it as it reads that answer
/// (`cascade::platform_status`): a Bedrock exception by its type, a Google error by its code.
/// `None` for another family's, which fails over as a broken stream.
pub fn early_error(dialect: Dialect, detail: &str) -> Option<ErrorAnswer> {
    let data = detail.strip_prefix(ERROR_EVENT_DETAIL)?;
    let v: serde_json::Value = serde_json::from_str(data).ok()?;
    let error = v.get("error")?;
    let kind = error.get("type").and_then(serde_json::Value::as_str)?;
    match dialect {
        Dialect::Bedrock => {
            let header = ("x-amzn-errortype".to_owned(), kind.to_owned());
            Some((500, vec![header], String::new()))
        }
        Dialect::Gemini => {
            let code = error.get("code").and_then(serde_json::Value::as_u64);
            let status = code.and_then(|c| u16::try_from(c).ok()).unwrap_or(500);
            let message = error.get("message").cloned().unwrap_or_default();
            let text =
                serde_json::json!({"error": {"code": status, "status": kind, "message": message}});
            Some((status, Vec::new(), text.to_string()))
        }
        Dialect::Openai | Dialect::Anthropic => None,
    }
}

#[cfg(test)]
#[path = "upstream_events_tests.rs"]
mod tests;
