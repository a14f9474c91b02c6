//! A streamed answer's upstream side, as the relay reads it: the provider's decoder puts the
//! bytes in chat (or marked native) events, then the relay frames, meters and ends them.
//!
//! When whole events pass through the decoder untouched, the runtime may write plain events as
//! they came and hand them over later (`read_passed`): only the first parser on the way ever
//! holds a part-read event, so `take_pending` and `read_passed` move exactly that one between
//! the two.

use crate::providers::StreamDecoder;
use crate::stream::{Relay, RelayStep};
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
        self.relay.on_end()
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

#[cfg(test)]
#[path = "upstream_events_tests.rs"]
mod tests;
