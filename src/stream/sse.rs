//! Incremental Server-Sent Events parsing that keeps each event's raw bytes, so complete events
//! can be forwarded exactly as the upstream sent them.

/// What an event means to the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// `data: [DONE]`: the OpenAI stream terminator.
    Done,
    /// An `error` event, or a data payload that is a JSON object with an `error` member.
    Error(String),
    Data,
    /// Only comments or fields without data (`: ping`, `retry: 1000`).
    Empty,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// `event:` field, if any.
    pub name: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The bytes of the event including its terminating blank line.
    pub raw: Vec<u8>,
}

/// Bounds the bytes held while waiting for an event's end, so a stream that never sends a blank
/// line cannot grow memory without limit.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;

#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// How far `buf` has been searched for the end of its first event, and where the line being
    /// searched began: a push resumes there, so a long event arriving in many small chunks is
    /// scanned once in all, not once per chunk.
    scanned: usize,
    line_start: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversized;

impl SseParser {
    /// Feeds bytes; returns every event they complete. Linear in the bytes received: each byte
    /// is scanned once, and completed events leave the buffer in one move per push.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<Event>, Oversized> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(end) = self.next_end(start) {
            events.push(parse_event(self.buf[start..end].to_vec()));
            start = end;
            self.scanned = start;
            self.line_start = start;
        }
        self.buf.drain(..start);
        self.scanned -= start;
        self.line_start -= start;
        if self.buf.len() > MAX_EVENT_BYTES {
            return Err(Oversized);
        }
        Ok(events)
    }

    /// The bytes of an event not yet complete, taken out; the parser starts afresh.
    pub fn take_pending(&mut self) -> Vec<u8> {
        self.scanned = 0;
        self.line_start = 0;
        std::mem::take(&mut self.buf)
    }

    /// Bytes of an event not yet complete.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Index just past the blank line ending the event that starts at `start` (`\n\n`,
    /// `\r\n\r\n`, `\r\r`, or mixed), resuming the search where the last one stopped.
    fn next_end(&mut self, start: usize) -> Option<usize> {
        let buf = &self.buf;
        let (mut i, mut line_start) = (self.scanned.max(start), self.line_start.max(start));
        while i < buf.len() {
            let eol = match buf[i] {
                b'\n' => 1,
                b'\r' if buf.get(i + 1) == Some(&b'\n') => 2,
                b'\r' if i + 1 < buf.len() => 1,
                // A lone '\r' at the end may be the first half of "\r\n": wait for more.
                b'\r' => break,
                _ => {
                    i += 1;
                    continue;
                }
            };
            if i == line_start {
                return Some(i + eol);
            }
            i += eol;
            line_start = i;
        }
        self.scanned = i;
        self.line_start = line_start;
        None
    }
}

fn parse_event(raw: Vec<u8>) -> Event {
    let text = String::from_utf8_lossy(&raw);
    let mut name = None;
    // The data lines joined with '\n', built in place: one allocation for the usual one line.
    let mut data = String::new();
    let mut lines = 0usize;
    for line in text.split(['\n', '\r']).filter(|l| !l.is_empty()) {
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if lines > 0 {
                    data.push('\n');
                }
                data.push_str(value);
                lines += 1;
            }
            "event" => name = Some(value.to_owned()),
            _ => {}
        }
    }
    let kind = classify(name.as_deref(), &data);
    Event {
        kind,
        name,
        data,
        raw,
    }
}

fn classify(name: Option<&str>, data: &str) -> EventKind {
    if name == Some("error") {
        return EventKind::Error(data.to_owned());
    }
    if data.is_empty() {
        return EventKind::Empty;
    }
    if data.trim() == "[DONE]" {
        return EventKind::Done;
    }
    // A key spelled `error` needs those letters, or an escape standing for one of them: an event
    // with neither is not parsed (most events; parsing each one was the relay's largest cost).
    let may_name_error = data.contains("error") || data.contains('\\');
    let is_error = may_name_error
        && data.trim_start().starts_with('{')
        && serde_json::from_str::<serde_json::Value>(data)
            .ok()
            .is_some_and(|v| v.get("error").is_some_and(|e| !e.is_null()));
    if is_error {
        EventKind::Error(data.to_owned())
    } else {
        EventKind::Data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n: keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\r\n\r\ndata: [DONE]\n\n";

    fn kinds(events: &[Event]) -> Vec<EventKind> {
        events.iter().map(|e| e.kind.clone()).collect()
    }

    #[test]
    fn events_are_found_however_the_bytes_are_split() {
        let bytes = STREAM.as_bytes();
        for split in 0..bytes.len() {
            let mut p = SseParser::default();
            let mut events = p.push(&bytes[..split]).unwrap();
            events.extend(p.push(&bytes[split..]).unwrap());
            assert_eq!(
                kinds(&events),
                [
                    EventKind::Data,
                    EventKind::Empty,
                    EventKind::Data,
                    EventKind::Done
                ],
                "split at {split}"
            );
            let raw: Vec<u8> = events.iter().flat_map(|e| e.raw.clone()).collect();
            assert_eq!(raw, bytes, "raw bytes are kept exactly");
            assert_eq!(p.pending(), 0);
        }
    }

    #[test]
    fn byte_at_a_time_works() {
        let mut p = SseParser::default();
        let events: Vec<Event> = STREAM.bytes().flat_map(|b| p.push(&[b]).unwrap()).collect();
        assert_eq!(events.len(), 4);
        assert_eq!(
            events[0].data,
            r#"{"choices":[{"delta":{"content":"Hel"}}]}"#
        );
    }

    #[test]
    fn error_objects_and_error_events_are_errors() {
        let mut p = SseParser::default();
        let e = p
            .push(b"data: {\"error\":{\"message\":\"overloaded\"}}\n\nevent: error\ndata: {\"type\":\"overloaded_error\"}\n\ndata: {\"error\":null,\"choices\":[]}\n\n")
            .unwrap();
        assert!(matches!(e[0].kind, EventKind::Error(_)));
        assert!(matches!(e[1].kind, EventKind::Error(_)));
        assert_eq!(e[1].name.as_deref(), Some("error"));
        assert_eq!(
            e[2].kind,
            EventKind::Data,
            "a null error member is not an error"
        );
    }

    #[test]
    fn an_error_key_spelled_with_escapes_is_still_an_error_and_plain_data_is_data() {
        let mut p = SseParser::default();
        let e = p
            .push(b"data: {\"\\u0065rror\":{\"message\":\"x\"}}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n")
            .unwrap();
        assert!(matches!(e[0].kind, EventKind::Error(_)));
        assert_eq!(e[1].kind, EventKind::Data);
    }

    #[test]
    fn multi_line_data_is_joined() {
        let mut p = SseParser::default();
        let e = p.push(b"data: a\ndata: b\n\n").unwrap();
        assert_eq!(e[0].data, "a\nb");
    }

    #[test]
    fn a_long_event_in_many_small_chunks_is_scanned_once_not_once_per_chunk() {
        // 512 KiB in 64-byte chunks: 8,192 pushes. Rescanning from the start on each push would
        // read about 2.1e9 bytes; this must finish in a blink even in a debug build.
        let mut p = SseParser::default();
        let chunk = [b'x'; 64];
        p.push(b"data: ").unwrap();
        for _ in 0..8_192 {
            assert!(p.push(&chunk).unwrap().is_empty());
        }
        let events = p.push(b"\n\n").unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.len(), 8_192 * 64);
        assert_eq!(p.pending(), 0);
        assert_eq!((p.scanned, p.line_start), (0, 0));
    }

    #[test]
    fn an_event_that_never_ends_is_bounded() {
        let mut p = SseParser::default();
        let big = vec![b'x'; MAX_EVENT_BYTES + 1];
        assert_eq!(p.push(&big), Err(Oversized));
    }
}
