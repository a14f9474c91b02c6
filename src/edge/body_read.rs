//! Reading an upstream body with a bound on time (and, through `Capped`, on bytes): one read at
//! a time with the runtime's own reader, and a whole body read to a cap.

use super::http::now_ms;
use super::js_fetch::{self, Whole};
use crate::cascade::body_limit::Capped;
use futures::future::{select, Either};
use std::pin::pin;
use std::time::Duration;
use worker::js_sys::{Promise, Uint8Array};
use worker::wasm_bindgen::JsCast;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Delay};

/// One read of an upstream body, bounded in time.
pub enum Read {
    Chunk(Vec<u8>),
    End,
    Failed(String),
    TimedOut,
}

/// A body read through the runtime's own reader, one `read()` per chunk. A read that timed out
/// stays pending inside and the next `read` waits on it, so no chunk is lost to a timeout. Unlike
/// workers-rs's `ByteStream`, nothing is converted per chunk beyond the bytes.
pub struct BodyReader {
    reader: web_sys::ReadableStreamDefaultReader,
    /// A read under way: its promise (to hand on) and the future awaiting it.
    pending: Option<(Promise, JsFuture)>,
}

impl BodyReader {
    pub fn new(body: web_sys::ReadableStream) -> Self {
        let reader = body.get_reader().unchecked_into();
        Self {
            reader,
            pending: None,
        }
    }

    /// The runtime's reader and the read under way, for JavaScript to read on with
    /// (`stream_pump`).
    pub fn into_parts(self) -> (web_sys::ReadableStreamDefaultReader, Option<Promise>) {
        (self.reader, self.pending.map(|(promise, _)| promise))
    }

    /// A reader handed back, with the read JavaScript left under way.
    pub fn resume(reader: web_sys::ReadableStreamDefaultReader, pending: Option<Promise>) -> Self {
        let pending = pending.map(|p| (p.clone(), JsFuture::from(p)));
        Self { reader, pending }
    }

    pub async fn read(&mut self, timeout_ms: u64) -> Read {
        let timer = pin!(Delay::from(Duration::from_millis(timeout_ms)));
        self.read_or(timer).await
    }

    /// The next chunk, unless `timer` fires first (then `Read::TimedOut`, the read kept pending).
    pub async fn read_or<T: std::future::Future + Unpin>(&mut self, timer: T) -> Read {
        let reader = &self.reader;
        let (_, next) = self.pending.get_or_insert_with(|| {
            let read = reader.read();
            (read.clone(), JsFuture::from(read))
        });
        match select(next, timer).await {
            Either::Left((outcome, _)) => {
                self.pending = None;
                match outcome {
                    Ok(result) => chunk_of(result.unchecked_into()),
                    Err(e) => Read::Failed(js_fetch::describe(e)),
                }
            }
            Either::Right(_) => Read::TimedOut,
        }
    }
}

fn chunk_of(result: web_sys::ReadableStreamReadResult) -> Read {
    if result.get_done().unwrap_or(false) {
        return Read::End;
    }
    match result.get_value().dyn_into::<Uint8Array>() {
        Ok(bytes) => Read::Chunk(bytes.to_vec()),
        Err(_) => Read::Failed("the body gave a chunk that is not bytes".to_owned()),
    }
}

/// How a bounded body read ended.
pub enum Bounded {
    /// The body ended, or `stop` said enough was read.
    Read(Capped),
    Failed(String),
    TimedOut,
}

impl Bounded {
    /// A whole-body read as a bounded one (its length was announced within `buf`'s cap).
    pub fn of_whole(mut buf: Capped, read: Whole) -> Self {
        match read {
            Whole::Read(bytes) => {
                buf.push(&bytes);
                Bounded::Read(buf)
            }
            Whole::Failed(e) => Bounded::Failed(e),
            Whole::TimedOut => Bounded::TimedOut,
        }
    }
}

/// Reads `resp`'s body into `buf` until it ends, `stop(&buf)` holds, or `deadline` passes: in
/// one `arrayBuffer()` when its announced length fits the cap, else chunk by chunk. Whatever is
/// left unread is cancelled by the caller's `controller.abort()`.
pub async fn read_bounded(
    resp: &web_sys::Response,
    mut buf: Capped,
    deadline: u64,
    stop: fn(&Capped) -> bool,
) -> Bounded {
    let left = deadline.saturating_sub(now_ms());
    if left == 0 {
        return Bounded::TimedOut;
    }
    if let Some(read) = js_fetch::announced_body(resp, buf.limit(), left).await {
        return Bounded::of_whole(buf, read);
    }
    // No body at all (a 204, say) reads as empty.
    let Some(body) = resp.body() else {
        return Bounded::Read(buf);
    };
    let mut body = BodyReader::new(body);
    loop {
        let left = deadline.saturating_sub(now_ms());
        if left == 0 {
            return Bounded::TimedOut;
        }
        match body.read(left).await {
            Read::Chunk(bytes) => {
                buf.push(&bytes);
                if stop(&buf) {
                    return Bounded::Read(buf);
                }
            }
            Read::End => return Bounded::Read(buf),
            Read::Failed(e) => return Bounded::Failed(e),
            Read::TimedOut => return Bounded::TimedOut,
        }
    }
}
