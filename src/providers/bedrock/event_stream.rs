//! The AWS event stream (`application/vnd.amazon.eventstream`) a ConverseStream answer arrives
//! in: binary frames, each
//! `total length (u32 BE) | headers length (u32 BE) | prelude CRC32 | headers | payload | message CRC32`,
//! where the prelude CRC covers the first 8 bytes and the message CRC everything before it.
//! Frames may be split anywhere across body chunks; the bytes of a partial frame are held until
//! it completes, bounded by `MAX_FRAME_BYTES` (checked as soon as the prelude is in).

/// The largest frame accepted. ConverseStream events are small (a delta is a few hundred bytes);
/// the bound keeps a corrupt length from holding memory.
pub const MAX_FRAME_BYTES: usize = 1 << 20;

/// Prelude (12 bytes) and message CRC (4 bytes): the smallest frame has no headers and no payload.
const MIN_FRAME_BYTES: usize = 16;

/// One decoded frame: the string headers the gateway reads, and the payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    /// `:message-type`: `event`, `exception` or `error`.
    pub message_type: Option<String>,
    /// `:event-type`, e.g. `contentBlockDelta`.
    pub event_type: Option<String>,
    /// `:exception-type`, lowerCamel, e.g. `throttlingException`.
    pub exception_type: Option<String>,
    pub content_type: Option<String>,
    /// `:error-code` and `:error-message` of an `error` frame (a failure outside the modelled
    /// exceptions).
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub payload: Vec<u8>,
}

/// Why the stream cannot be read on: the upstream is then treated as failing (`server`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// A total length below 16 or above `MAX_FRAME_BYTES`.
    Length,
    PreludeCrc,
    MessageCrc,
    /// A header runs past the headers' length, or has an unknown value type.
    Headers,
}

impl FrameError {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Length => "event stream frame length out of bounds",
            Self::PreludeCrc => "event stream prelude CRC mismatch",
            Self::MessageCrc => "event stream message CRC mismatch",
            Self::Headers => "event stream frame headers are malformed",
        }
    }
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Frames out of body chunks. After an error every later push returns the same error: nothing
/// after a corrupt frame can be trusted to start at a frame boundary.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    failed: Option<FrameError>,
}

impl FrameDecoder {
    /// Feeds bytes; returns every frame they complete.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<Frame>, FrameError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.buf.extend_from_slice(chunk);
        let mut frames = Vec::new();
        let mut start = 0;
        loop {
            match next_frame(self.buf.get(start..).unwrap_or_default()) {
                Ok(Some((frame, len))) => {
                    frames.push(frame);
                    start += len;
                }
                Ok(None) => break,
                Err(e) => {
                    self.failed = Some(e);
                    self.buf = Vec::new();
                    return Err(e);
                }
            }
        }
        self.buf.drain(..start);
        Ok(frames)
    }

    /// Bytes of a frame not yet complete.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    if let Some(b) = bytes.get(at..at + 4) {
        word.copy_from_slice(b);
    }
    u32::from_be_bytes(word)
}

/// The first frame of `buf` and its length, `None` while it is incomplete.
fn next_frame(buf: &[u8]) -> Result<Option<(Frame, usize)>, FrameError> {
    if buf.len() < 12 {
        return Ok(None);
    }
    if crc32(buf.get(..8).unwrap_or_default()) != be32(buf, 8) {
        return Err(FrameError::PreludeCrc);
    }
    let total = usize::try_from(be32(buf, 0)).map_err(|_| FrameError::Length)?;
    let headers_len = usize::try_from(be32(buf, 4)).map_err(|_| FrameError::Length)?;
    if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&total) {
        return Err(FrameError::Length);
    }
    if headers_len > total - MIN_FRAME_BYTES {
        return Err(FrameError::Headers);
    }
    let Some(whole) = buf.get(..total) else {
        return Ok(None);
    };
    let body_end = total - 4;
    if crc32(whole.get(..body_end).unwrap_or_default()) != be32(whole, body_end) {
        return Err(FrameError::MessageCrc);
    }
    let mut frame = Frame::default();
    read_headers(
        whole.get(12..12 + headers_len).unwrap_or_default(),
        &mut frame,
    )?;
    frame.payload = whole
        .get(12 + headers_len..body_end)
        .unwrap_or_default()
        .to_vec();
    Ok(Some((frame, total)))
}

/// The first `n` bytes of `input`, which moves past them.
fn take<'a>(input: &mut &'a [u8], n: usize) -> Result<&'a [u8], FrameError> {
    let (head, rest) = input.split_at_checked(n).ok_or(FrameError::Headers)?;
    *input = rest;
    Ok(head)
}

/// Every header is walked, whatever its type, so the next one starts where it should; only the
/// string headers the gateway reads are kept.
fn read_headers(mut input: &[u8], frame: &mut Frame) -> Result<(), FrameError> {
    while !input.is_empty() {
        let name_len = usize::from(*take(&mut input, 1)?.first().unwrap_or(&0));
        let name = take(&mut input, name_len)?;
        let value_type = take(&mut input, 1)?.first().copied().unwrap_or(u8::MAX);
        let value_len = match value_type {
            0 | 1 => 0,
            2 => 1,
            3 => 2,
            4 => 4,
            5 | 8 => 8,
            9 => 16,
            6 | 7 => {
                let len = take(&mut input, 2)?;
                usize::from(u16::from_be_bytes([
                    len.first().copied().unwrap_or(0),
                    len.get(1).copied().unwrap_or(0),
                ]))
            }
            _ => return Err(FrameError::Headers),
        };
        let value = take(&mut input, value_len)?;
        if value_type != 7 {
            continue;
        }
        let slot = match name {
            b":message-type" => &mut frame.message_type,
            b":event-type" => &mut frame.event_type,
            b":exception-type" => &mut frame.exception_type,
            b":content-type" => &mut frame.content_type,
            b":error-code" => &mut frame.error_code,
            b":error-message" => &mut frame.error_message,
            _ => continue,
        };
        *slot = Some(String::from_utf8_lossy(value).into_owned());
    }
    Ok(())
}

/// CRC-32 (IEEE 802.3: reflected, polynomial 0xEDB88320), the checksum event stream frames carry.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc = CRC_TABLE[usize::from((crc as u8) ^ b)] ^ (crc >> 8);
    }
    !crc
}

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

#[cfg(test)]
#[path = "event_stream_tests.rs"]
mod tests;
