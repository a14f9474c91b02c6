//! Limits on reading an upstream body: what remains of the call's `timeout_ms`, and a byte cap.
//! An upstream that stalls or floods its body must cost the request no more than its timeout and
//! the isolate no more than a bounded buffer.

/// Error bodies are read for the log and pass-through only; their first 64 KiB say enough.
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// A non-streamed answer is held whole in the isolate (128 MB in production) before it is
/// checked, so a larger one is that candidate's `oversized` failure (docs/security.md): the
/// cascade moves on, and no breaker counts it (the provider answered; the answer was too big).
pub const MAX_SUCCESS_BODY: usize = 16 * 1024 * 1024;

/// Body bytes gathered up to `limit`; anything offered past it is dropped and remembered.
#[derive(Debug)]
pub struct Capped {
    limit: usize,
    bytes: Vec<u8>,
    over: bool,
}

impl Capped {
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            bytes: Vec::new(),
            over: false,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        let room = self.limit.saturating_sub(self.bytes.len());
        if chunk.len() > room {
            self.over = true;
        }
        self.bytes
            .extend_from_slice(&chunk[..chunk.len().min(room)]);
    }

    /// How many bytes it holds at most.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// `limit` bytes are held: an error body stops being read here.
    pub fn full(&self) -> bool {
        self.bytes.len() >= self.limit
    }

    /// The body was longer than `limit`: a success body is refused.
    pub fn over(&self) -> bool {
        self.over
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The bytes as text, without the replacement character a cut through the last character
    /// would leave.
    pub fn into_text(self) -> String {
        let bytes = self.bytes;
        match std::str::from_utf8(&bytes) {
            Ok(_) => String::from_utf8(bytes).unwrap_or_default(),
            Err(e) if e.error_len().is_none() => {
                String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
            }
            Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_body_stops_at_64_kib_and_keeps_only_that_much() {
        let mut c = Capped::new(MAX_ERROR_BODY);
        c.push(&[b'a'; 40 * 1024]);
        assert!(!c.full());
        c.push(&[b'b'; 40 * 1024]);
        assert!(c.full() && c.over());
        assert_eq!(c.into_bytes().len(), MAX_ERROR_BODY);
    }

    #[test]
    fn a_body_of_exactly_the_cap_is_full_but_not_over() {
        let mut c = Capped::new(8);
        c.push(b"12345678");
        assert!(c.full());
        assert!(!c.over());
        c.push(b"");
        assert!(!c.over());
        c.push(b"9");
        assert!(c.over());
    }

    #[test]
    fn cut_text_drops_a_split_last_character_but_keeps_other_invalid_bytes_visible() {
        let mut c = Capped::new(4);
        c.push("abcé".as_bytes());
        assert_eq!(c.into_text(), "abc");
        let mut c = Capped::new(8);
        c.push(b"a\xffb");
        assert_eq!(c.into_text(), "a\u{fffd}b");
    }
}
