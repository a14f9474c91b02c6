//! The middle of a streamed answer, driven from JavaScript: once the first event is out, every
//! later chunk is read, handed to the relay and written to the caller by a few lines of
//! JavaScript, which call into Rust once per chunk, synchronously.
//!
//! Why: driven from a Rust future, each chunk cost two promises awaited through wasm-bindgen (a
//! `read()` and a `write()`, two closures each and an executor wake per settle), a `select`
//! against the caller going away, and about 40 crossings of the boundary; `make profile` put
//! that at about 100 µs of isolate CPU per chunk, most of it the futures' glue. Here a chunk is
//! one read, one synchronous call (the relay: SSE events, usage, the surface's encoding) and one
//! write; a chunk the relay leaves as it was is written as the same object.
//!
//! What the Rust pump decided stays decided the same way: each write is awaited before the next
//! read (backpressure); the upstream may stay quiet for `read_timeout_ms` (one timer, re-armed
//! only when it fires, against the last chunk's time); the caller going away (the writer's
//! `closed` settles, or a write fails) stops the pump with the read still pending handed back, so
//! the late-usage read loses no chunk. How the middle ended goes back to Rust, which settles.

use super::body_read::BodyReader;
use super::js_fetch::describe;
use super::stream_relayed::RelayState;
use crate::stream::StreamEnd;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use worker::js_sys::{Function, Promise, Uint8Array};
use worker::wasm_bindgen_futures::JsFuture;
use worker::web_sys;

#[wasm_bindgen(inline_js = r#"
export function relay_chunks(reader, pending, writer, step, idleMs, lastChunkAt) {
  return new Promise((resolve) => {
    let over = false;
    let reading = pending;
    let last = lastChunkAt;
    let timer;
    const finish = (kind, error) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      resolve({ kind, error, pending: reading });
    };
    const onTimer = () => {
      if (over) return;
      const left = idleMs - (Date.now() - last);
      if (left > 0) timer = setTimeout(onTimer, left);
      else finish(3);
    };
    const gone = () => finish(4);
    const onRead = (r) => {
      if (over) return;
      reading = undefined;
      if (r.done) return finish(1);
      const chunk = r.value;
      if (!(chunk instanceof Uint8Array)) return finish(2, "the body gave a chunk that is not bytes");
      last = Date.now();
      let out = step(chunk);
      if (out === null) return finish(0);
      if (out === undefined) out = chunk;
      if (out.byteLength === 0) return next();
      writer.write(out).then(next, gone);
    };
    const onFail = (e) => {
      if (over) return;
      reading = undefined;
      finish(2, e);
    };
    const next = () => {
      if (over) return;
      reading = reader.read();
      reading.then(onRead, onFail);
    };
    writer.closed.then(gone, gone);
    timer = setTimeout(onTimer, Math.max(0, idleMs - (Date.now() - last)));
    if (reading === undefined) next();
    else reading.then(onRead, onFail);
  });
}

export function drain_body(reader, pending, reads, readMs) {
  return new Promise((resolve) => {
    let left = reads;
    const read = (p) => {
      const timer = setTimeout(resolve, readMs);
      p.then(
        (r) => {
          clearTimeout(timer);
          if (r.done || !(r.value instanceof Uint8Array) || --left <= 0) resolve();
          else read(reader.read());
        },
        () => {
          clearTimeout(timer);
          resolve();
        },
      );
    };
    read(pending ?? reader.read());
  });
}
"#)]
extern "C" {
    /// What `relay_chunks` resolves to.
    type Middle;
    #[wasm_bindgen(method, getter)]
    fn kind(this: &Middle) -> u32;
    #[wasm_bindgen(method, getter)]
    fn error(this: &Middle) -> JsValue;
    #[wasm_bindgen(method, getter)]
    fn pending(this: &Middle) -> Option<Promise>;

    /// Reads `reader` (starting with `pending`, a read already under way, when given), calls
    /// `step` with each chunk and writes what it returns to `writer` (`undefined`: the chunk as
    /// it was; an empty array: nothing), until `step` returns `null`, the body ends or fails,
    /// `idleMs` pass without a chunk, or the caller's side goes away. Resolves to a `Middle`
    /// whose `kind` is one of `MiddleEnd`'s in order, never rejects.
    fn relay_chunks(
        reader: &web_sys::ReadableStreamDefaultReader,
        pending: Option<Promise>,
        writer: &web_sys::WritableStreamDefaultWriter,
        step: &Function,
        idle_ms: f64,
        last_chunk_at: f64,
    ) -> Promise;

    /// Reads on until the body ends: at most `reads` reads, each within `read_ms`.
    fn drain_body(
        reader: &web_sys::ReadableStreamDefaultReader,
        pending: Option<Promise>,
        reads: u32,
        read_ms: f64,
    ) -> Promise;
}

/// How the middle of a stream ended.
pub enum MiddleEnd {
    /// The relay ended the stream: its last bytes and how it ended.
    Finished(Vec<u8>, StreamEnd),
    /// The upstream body ended (without `[DONE]`: the relay would have finished it).
    Ended,
    Failed(String),
    /// No chunk within the read timeout.
    TimedOut,
    /// The caller's side went away.
    Gone,
}

/// What the per-chunk call shares with the pump: the relay's state, and the end it came to.
struct Stepping {
    state: Option<RelayState>,
    finished: Option<(Vec<u8>, StreamEnd)>,
}

/// Relays chunks until the stream's middle ends. `None` only if the state was lost, which the
/// per-chunk call never does (it puts the state back before it returns).
pub async fn relay_middle(
    state: RelayState,
    reader: BodyReader,
    writer: &web_sys::WritableStreamDefaultWriter,
) -> Option<(RelayState, BodyReader, MiddleEnd)> {
    let (idle_ms, last_chunk_ms) = (state.read_timeout_ms(), state.last_chunk_ms());
    let shared = Rc::new(RefCell::new(Stepping {
        state: Some(state),
        finished: None,
    }));
    let inner = shared.clone();
    let step = Closure::<dyn FnMut(Uint8Array) -> JsValue>::new(move |chunk: Uint8Array| {
        let mut s = inner.borrow_mut();
        let Some(state) = s.state.as_mut() else {
            return JsValue::NULL;
        };
        let bytes = chunk.to_vec();
        let (out, end) = state.on_chunk(bytes.clone());
        match end {
            Some(end) => {
                s.finished = Some((out, end));
                JsValue::NULL
            }
            None if out == bytes => JsValue::UNDEFINED,
            None => Uint8Array::from(&out[..]).into(),
        }
    });
    let (js_reader, pending) = reader.into_parts();
    let middle = JsFuture::from(relay_chunks(
        &js_reader,
        pending,
        writer,
        step.as_ref().unchecked_ref(),
        idle_ms as f64,
        last_chunk_ms as f64,
    ))
    .await;
    drop(step);
    let mut s = shared.borrow_mut();
    let state = s.state.take()?;
    let (end, pending) = match middle {
        Ok(m) => {
            let m: Middle = m.unchecked_into();
            let end = match (m.kind(), s.finished.take()) {
                (0, Some((bytes, end))) => MiddleEnd::Finished(bytes, end),
                (1, _) => MiddleEnd::Ended,
                (2, _) => MiddleEnd::Failed(failure(m.error())),
                (3, _) => MiddleEnd::TimedOut,
                _ => MiddleEnd::Gone,
            };
            (end, m.pending())
        }
        Err(e) => (MiddleEnd::Failed(failure(e)), None),
    };
    Some((state, BodyReader::resume(js_reader, pending), end))
}

/// A failed read's detail, worded as `body_read` words it (a bare string describes as itself).
fn failure(e: JsValue) -> String {
    format!("upstream read failed: {}", describe(e))
}

/// Reads what follows `[DONE]` (normally just the end of the body) so the upstream connection
/// can be reused, within a small bound: at most 16 reads of at most a second each.
pub async fn drain(reader: BodyReader) {
    let (js_reader, pending) = reader.into_parts();
    let _ = JsFuture::from(drain_body(&js_reader, pending, 16, 1_000.0)).await;
}
