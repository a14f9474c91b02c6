//! What reaches the caller of a stream, decided chunk by chunk. Complete events are forwarded as
//! the upstream sent them; a failure after the first byte cannot be taken back, so it becomes one
//! final error event in the gateway's own words and the stream ends.

use super::sse::{EventKind, SseParser};
use crate::api::{ApiError, ErrorKind};
use crate::usage::{StreamUsage, TokenCounts};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// `data: [DONE]` arrived.
    Completed,
    /// Anything else; the detail is for the log line only.
    Failed(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayStep {
    /// Forward these bytes (maybe none yet) and keep reading.
    Forward(Vec<u8>),
    /// Forward these bytes, then end the stream.
    Finish { bytes: Vec<u8>, end: StreamEnd },
}

/// How a failure that was the upstream's own error event is described (for the log line, and
/// so the start of a stream can read the event back: `request::upstream_events::early_error`).
pub const ERROR_EVENT_DETAIL: &str = "upstream error event: ";

/// The one final event a caller sees when a stream fails after its first byte.
pub fn error_event() -> Vec<u8> {
    ApiError::new(
        ErrorKind::UpstreamStreamError,
        "The upstream stream failed after it had started; the answer is incomplete.",
    )
    .to_sse_event()
}

#[derive(Debug, Default)]
pub struct Relay {
    parser: SseParser,
    data_events: usize,
    /// Reads usage as events pass, and strips the usage chunk the caller did not ask for.
    usage: StreamUsage,
}

impl Relay {
    pub fn metering(usage: StreamUsage) -> Self {
        Self {
            usage,
            ..Self::default()
        }
    }

    /// The tokens the stream reported so far; `None` when it reported none.
    pub fn tokens(&self) -> Option<TokenCounts> {
        self.usage.tokens()
    }

    /// The stream's usage as read so far: reported, partial, or what to estimate it from.
    pub fn usage(&self) -> &StreamUsage {
        &self.usage
    }

    pub fn on_chunk(&mut self, chunk: &[u8]) -> RelayStep {
        let events = match self.parser.push(chunk) {
            Ok(events) => events,
            Err(_) => return self.fail(Vec::new(), "an event exceeded the size limit".into()),
        };
        let mut out = Vec::new();
        for event in events {
            match event.kind {
                EventKind::Done => {
                    out.extend_from_slice(&event.raw);
                    return RelayStep::Finish {
                        bytes: out,
                        end: StreamEnd::Completed,
                    };
                }
                EventKind::Error(detail) => {
                    return self.fail(out, format!("{ERROR_EVENT_DETAIL}{detail}"));
                }
                EventKind::Data => {
                    self.data_events += 1;
                    if self.usage.observe(&event.data) {
                        out.extend_from_slice(&event.raw);
                    }
                }
                EventKind::Empty => out.extend_from_slice(&event.raw),
            }
        }
        RelayStep::Forward(out)
    }

    /// The part-read event the parser holds, taken out: whoever reads on holds it now.
    pub fn take_pending(&mut self) -> Vec<u8> {
        self.parser.take_pending()
    }

    /// The upstream closed: without `[DONE]` the answer is incomplete.
    pub fn on_end(&mut self) -> RelayStep {
        self.fail(Vec::new(), "stream ended without [DONE]".into())
    }

    /// A read failed or timed out.
    pub fn on_failure(&mut self, detail: String) -> RelayStep {
        self.fail(Vec::new(), detail)
    }

    /// Data events forwarded so far: until there is one, the stream may still fail over.
    pub fn data_events(&self) -> usize {
        self.data_events
    }

    fn fail(&mut self, mut bytes: Vec<u8>, detail: String) -> RelayStep {
        bytes.extend_from_slice(&error_event());
        RelayStep::Finish {
            bytes,
            end: StreamEnd::Failed(detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(content: &str) -> String {
        format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{content}\"}}}}]}}\n\n")
    }

    #[test]
    fn complete_events_are_forwarded_as_sent_and_done_completes() {
        let mut r = Relay::default();
        let a = chunk("a");
        assert_eq!(
            r.on_chunk(a.as_bytes()),
            RelayStep::Forward(a.clone().into_bytes())
        );
        let tail = format!("{}data: [DONE]\n\n", chunk("b"));
        assert_eq!(
            r.on_chunk(tail.as_bytes()),
            RelayStep::Finish {
                bytes: tail.clone().into_bytes(),
                end: StreamEnd::Completed
            }
        );
        assert_eq!(r.data_events(), 2);
    }

    #[test]
    fn a_partial_event_is_held_until_it_completes() {
        let mut r = Relay::default();
        let a = chunk("a");
        let (head, rest) = a.split_at(10);
        assert_eq!(r.on_chunk(head.as_bytes()), RelayStep::Forward(vec![]));
        assert_eq!(
            r.on_chunk(rest.as_bytes()),
            RelayStep::Forward(a.clone().into_bytes())
        );
    }

    #[test]
    fn an_upstream_error_event_after_data_becomes_our_final_error_event() {
        let mut r = Relay::default();
        r.on_chunk(chunk("a").as_bytes());
        let mixed = format!(
            "{}data: {{\"error\":{{\"message\":\"secret upstream detail\"}}}}\n\n",
            chunk("b")
        );
        let RelayStep::Finish { bytes, end } = r.on_chunk(mixed.as_bytes()) else {
            panic!("expected the stream to end")
        };
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with(&chunk("b")),
            "good events before the error still go out"
        );
        assert!(text.ends_with(&String::from_utf8(error_event()).unwrap()));
        assert!(
            !text.contains("secret upstream detail"),
            "upstream text stays in the log"
        );
        assert!(matches!(end, StreamEnd::Failed(d) if d.contains("secret upstream detail")));
    }

    #[test]
    fn a_stream_that_ends_without_done_is_a_failure() {
        let mut r = Relay::default();
        r.on_chunk(chunk("a").as_bytes());
        assert_eq!(
            r.on_end(),
            RelayStep::Finish {
                bytes: error_event(),
                end: StreamEnd::Failed("stream ended without [DONE]".into())
            }
        );
    }

    #[test]
    fn a_metering_relay_strips_the_usage_chunk_the_caller_did_not_ask_for_and_keeps_its_tokens() {
        let usage =
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\n";
        let tail = format!("{}{usage}data: [DONE]\n\n", chunk("b"));
        let mut r = Relay::metering(StreamUsage::chat(true));
        let RelayStep::Finish { bytes, .. } = r.on_chunk(tail.as_bytes()) else {
            panic!("expected the stream to end")
        };
        assert_eq!(
            bytes,
            format!("{}data: [DONE]\n\n", chunk("b")).into_bytes()
        );
        assert_eq!(r.tokens().map(|t| (t.prompt, t.completion)), Some((5, 7)));
        let mut r = Relay::metering(StreamUsage::chat(false));
        let RelayStep::Finish { bytes, .. } = r.on_chunk(tail.as_bytes()) else {
            panic!("expected the stream to end")
        };
        assert_eq!(bytes, tail.into_bytes(), "asked for: passed as sent");
    }

    #[test]
    fn the_part_read_event_is_taken_out_and_the_parser_starts_afresh() {
        let mut r = Relay::default();
        let a = chunk("a");
        r.on_chunk(&a.as_bytes()[..12]);
        assert_eq!(r.take_pending(), &a.as_bytes()[..12]);
        let b = chunk("b");
        assert_eq!(r.on_chunk(b.as_bytes()), RelayStep::Forward(b.into_bytes()));
    }

    #[test]
    fn the_final_error_event_is_the_documented_shape() {
        let text = String::from_utf8(error_event()).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(text.trim().strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(json["error"]["type"], "api_error");
        assert_eq!(json["error"]["code"], "upstream_stream_error");
        assert!(text.ends_with("\n\n"));
    }
}
