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
//! read (backpressure); each wait, on the upstream (a read) or on the caller (a write), may last
//! `read_timeout_ms` (one timer, re-armed only when it fires; when it fires, the core's
//! `stream::IdleWatch` says how long the side waited on has left, or whose silence ended the
//! stream: only the upstream's is the provider's); the caller going away (the writer's `closed`
//! settles, or a write fails) stops the pump with the read still pending handed back, so the
//! late-usage read loses no chunk. How the middle ended goes back to Rust, which settles.

use super::body_read::BodyReader;
use super::js_fetch::describe;
use super::stream_relayed::RelayState;
use crate::stream::{Awaiting, IdleCheck, IdleWatch, QuietEnd, StreamEnd};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use worker::js_sys::{Function, Promise, Uint8Array};
use worker::wasm_bindgen_futures::JsFuture;
use worker::web_sys;

#[wasm_bindgen(module = "/src/edge/stream_pump.js")]
extern "C" {
    /// What `relay_chunks` resolves to.
    type Middle;
    #[wasm_bindgen(method, getter)]
    fn kind(this: &Middle) -> u32;
    #[wasm_bindgen(method, getter)]
    fn error(this: &Middle) -> JsValue;
    #[wasm_bindgen(method, getter)]
    fn pending(this: &Middle) -> Option<Promise>;
    /// Events passed as sent that the relay has not metered yet.
    #[wasm_bindgen(method, getter)]
    fn batch(this: &Middle) -> Option<Uint8Array>;
    /// The event the pump had begun to read.
    #[wasm_bindgen(method, getter)]
    fn held(this: &Middle) -> Option<Uint8Array>;

    /// Reads `reader` (starting with `pending`, a read already under way since `last_chunk_at`,
    /// when given), calls `step` with each chunk (or, when `plain`, with the events that may need
    /// it) and writes what it returns to `writer` (`undefined`: the chunk as it was; an empty
    /// array: nothing), until `step` returns `null`, the body ends or fails, `idle` (asked when
    /// the timer fires: waiting on the caller or not, since when, now) answers 0, or the caller's
    /// side goes away. Resolves to a `Middle` whose `kind` is one of `MiddleEnd`'s in order,
    /// never rejects.
    #[allow(clippy::too_many_arguments)]
    fn relay_chunks(
        reader: &web_sys::ReadableStreamDefaultReader,
        pending: Option<Promise>,
        writer: &web_sys::WritableStreamDefaultWriter,
        step: &Function,
        idle: &Function,
        last_chunk_at: f64,
        plain: bool,
        held: Option<Uint8Array>,
        with_every_step: bool,
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
    /// The side waited on stayed quiet for the read timeout: whose silence it was.
    Quiet(QuietEnd),
    /// The caller's side went away.
    Gone,
}

/// What the per-chunk call shares with the pump: the relay's state, and the end it came to.
struct Stepping {
    state: Option<RelayState>,
    finished: Option<(Vec<u8>, StreamEnd)>,
    quiet: Option<QuietEnd>,
}

/// Relays chunks until the stream's middle ends. `None` only if the state was lost, which the
/// per-chunk call never does (it puts the state back before it returns).
pub async fn relay_middle(
    state: RelayState,
    reader: BodyReader,
    writer: &web_sys::WritableStreamDefaultWriter,
) -> Option<(RelayState, BodyReader, MiddleEnd)> {
    let (idle_ms, last_chunk_ms) = (state.read_timeout_ms(), state.last_chunk_ms());
    let mut state = state;
    let plain = state.plain_middle();
    let shared = Rc::new(RefCell::new(Stepping {
        state: Some(state),
        finished: None,
        quiet: None,
    }));
    let inner = shared.clone();
    let step = Closure::<dyn FnMut(Option<Uint8Array>, Option<Uint8Array>) -> JsValue>::new(
        move |chunk: Option<Uint8Array>, passed: Option<Uint8Array>| {
            let mut s = inner.borrow_mut();
            let Some(state) = s.state.as_mut() else {
                return JsValue::NULL;
            };
            if let Some(passed) = passed {
                state.absorb(passed.to_vec());
            }
            let Some(chunk) = chunk else {
                return JsValue::UNDEFINED;
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
        },
    );
    // The timer's question: how long the side waited on has left (ms), or 0 once its silence
    // ended the stream (the core says whose it was).
    let inner = shared.clone();
    let idle = Closure::<dyn FnMut(bool, f64, f64) -> f64>::new(
        move |on_caller: bool, since: f64, now: f64| {
            let awaiting = if on_caller {
                Awaiting::Caller
            } else {
                Awaiting::Upstream
            };
            match IdleWatch::new(idle_ms, awaiting, since as u64).check(now as u64) {
                IdleCheck::Wait(ms) => ms as f64,
                IdleCheck::Quiet(end) => {
                    inner.borrow_mut().quiet = Some(end);
                    0.0
                }
            }
        },
    );
    let (js_reader, pending) = reader.into_parts();
    let middle = JsFuture::from(relay_chunks(
        &js_reader,
        pending,
        writer,
        step.as_ref().unchecked_ref(),
        idle.as_ref().unchecked_ref(),
        last_chunk_ms as f64,
        plain.is_some(),
        plain
            .as_ref()
            .filter(|p| !p.held.is_empty())
            .map(|p| Uint8Array::from(&p.held[..])),
        plain.is_some_and(|p| p.with_every_step),
    ))
    .await;
    drop((step, idle));
    let mut s = shared.borrow_mut();
    let mut state = s.state.take()?;
    let (end, pending) = match middle {
        Ok(m) => {
            let m: Middle = m.unchecked_into();
            // What the pump passed, or had begun to read, goes back to the relay before the end
            // is judged: the events only when the end may still need them.
            if let Some(passed) = m.batch().filter(|_| state.needs_passed()) {
                state.absorb(passed.to_vec());
            }
            if let Some(held) = m.held() {
                state.hold(held.to_vec());
            }
            let end = match (m.kind(), s.finished.take(), s.quiet.take()) {
                (0, Some((bytes, end)), _) => MiddleEnd::Finished(bytes, end),
                (1, _, _) => MiddleEnd::Ended,
                (2, _, _) => MiddleEnd::Failed(failure(m.error())),
                (3, _, Some(quiet)) => MiddleEnd::Quiet(quiet),
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
