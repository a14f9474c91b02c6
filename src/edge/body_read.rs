//! Reading an upstream body with a bound on time (and, through `Capped`, on bytes): one read at
//! a time, a body watched for idleness across many reads, and a whole body read to a cap.

use super::http::now_ms;
use super::js_fetch::{self, Whole};
use crate::cascade::body_limit::Capped;
use futures::future::{select, Either};
use futures::StreamExt;
use std::pin::{pin, Pin};
use std::time::Duration;
use worker::{web_sys, ByteStream, Delay};

/// One read of an upstream body, bounded in time.
pub enum Read {
    Chunk(Vec<u8>),
    End,
    Failed(String),
    TimedOut,
}

pub async fn read_chunk(body: &mut ByteStream, timeout_ms: u64) -> Read {
    let next = pin!(body.next());
    let timer = pin!(Delay::from(Duration::from_millis(timeout_ms)));
    match select(next, timer).await {
        Either::Left((Some(Ok(bytes)), _)) => Read::Chunk(bytes),
        Either::Left((Some(Err(e)), _)) => Read::Failed(e.to_string()),
        Either::Left((None, _)) => Read::End,
        Either::Right(_) => Read::TimedOut,
    }
}

/// A body read chunk by chunk that fails only after `idle_ms` without a chunk. One timer covers
/// many chunks: it is re-armed for the time left when it fires after progress, instead of a timer
/// being set and cleared around every read.
pub struct WatchedBody {
    body: ByteStream,
    idle_ms: u64,
    last_progress: u64,
    timer: Option<Pin<Box<Delay>>>,
}

impl WatchedBody {
    pub fn new(body: ByteStream, idle_ms: u64) -> Self {
        Self {
            body,
            idle_ms,
            last_progress: now_ms(),
            timer: None,
        }
    }

    pub async fn next(&mut self) -> Read {
        loop {
            let idle = self.idle_ms;
            let timer = self
                .timer
                .get_or_insert_with(|| Box::pin(Delay::from(Duration::from_millis(idle))));
            let next = pin!(self.body.next());
            match select(next, timer.as_mut()).await {
                Either::Left((Some(Ok(bytes)), _)) => {
                    self.last_progress = now_ms();
                    return Read::Chunk(bytes);
                }
                Either::Left((Some(Err(e)), _)) => return Read::Failed(e.to_string()),
                Either::Left((None, _)) => return Read::End,
                Either::Right(_) => {
                    self.timer = None;
                    let quiet = now_ms().saturating_sub(self.last_progress);
                    if quiet >= self.idle_ms {
                        return Read::TimedOut;
                    }
                    let left = self.idle_ms - quiet;
                    self.timer = Some(Box::pin(Delay::from(Duration::from_millis(left))));
                }
            }
        }
    }

    pub fn body_mut(&mut self) -> &mut ByteStream {
        &mut self.body
    }
}

/// How a bounded body read ended.
pub enum Bounded {
    /// The body ended, or `stop` said enough was read.
    Read(Capped),
    Failed(String),
    TimedOut,
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
        return match read {
            Whole::Read(bytes) => {
                buf.push(&bytes);
                Bounded::Read(buf)
            }
            Whole::Failed(e) => Bounded::Failed(e),
            Whole::TimedOut => Bounded::TimedOut,
        };
    }
    // No body at all (a 204, say) reads as empty.
    let Some(body) = resp.body() else {
        return Bounded::Read(buf);
    };
    let mut body = ByteStream::from(body);
    loop {
        let left = deadline.saturating_sub(now_ms());
        if left == 0 {
            return Bounded::TimedOut;
        }
        match read_chunk(&mut body, left).await {
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
