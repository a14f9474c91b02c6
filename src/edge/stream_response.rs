//! A streamed answer on its way to the caller. The caller reads the readable side of the runtime's
//! native `IdentityTransformStream`, and one task under the request's `waitUntil` pumps into its
//! writable side what the relay makes of each upstream chunk: bytes are forwarded as they arrive
//! (never the whole body), each write awaited before the next read (backpressure), and nothing
//! JavaScript-side runs per chunk beyond the runtime's own read and write.
//!
//! The same task fails a stream whose upstream stays quiet too long (one timer per
//! `read_timeout_ms`, re-armed only when it fires), appends the error event to a failed read,
//! settles the stream before closing the caller's side, and notices the caller going away (the
//! writer's `closed` settles): then it hands the body to a late-usage read. `stream_relayed`
//! holds the state and what it owes at the end.

use super::body_read::{BodyReader, Read};
use super::http::now_ms;
use super::routing_client::{StreamReport, StreamReportTarget};
use super::stream_capture::StreamCapture;
use super::stream_relayed::{drain, LateUsage, RelayParts, RelayState, Relayed, UpstreamSide};
use super::upstream::StreamStart;
use super::usage_sink::StreamHandOff;
use crate::cascade::Settlement;
use crate::config::{CatalogModel, TenantId};
use crate::stream::StreamEnd;
use crate::usage::PendingUsage;
use futures::channel::oneshot;
use futures::future::{select, Either};
use std::pin::{pin, Pin};
use std::time::Duration;
use wasm_bindgen::prelude::*;
use worker::js_sys::Uint8Array;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Context, Delay, Env};

/// Who to tell how the stream ended.
pub struct StreamOwner {
    pub env: Env,
    pub tenant: TenantId,
    pub request_id: String,
    pub settlement: Settlement,
    /// A probe's timeout: while its stream runs, the probe is renewed for this long at a time.
    pub probe_hold_ms: u64,
    pub usage: Option<StreamUsageOwner>,
    /// Issue 27: a copy assembled for the response cache (`None`: the cache is not used).
    pub cache: Option<StreamCapture>,
}

/// The stream's usage record, waiting for its tokens: handed off when the stream settles,
/// whichever way (end, cut, or the caller going away), with what the relay read by then.
pub struct StreamUsageOwner {
    pub pending: PendingUsage,
    /// The model that serves the stream, whose prices it is charged at.
    pub model: CatalogModel,
    /// The request's prompt estimate, charged when the stream reports no usage.
    pub prompt_estimate: u64,
    pub hand_off: StreamHandOff,
}

#[wasm_bindgen]
extern "C" {
    /// The runtime's native byte pipe: what is written to its writable side is read from its
    /// readable side without a JavaScript stream in between.
    type IdentityTransformStream;
    #[wasm_bindgen(constructor, catch)]
    fn new() -> Result<IdentityTransformStream, JsValue>;
    #[wasm_bindgen(method, getter)]
    fn readable(this: &IdentityTransformStream) -> web_sys::ReadableStream;
    #[wasm_bindgen(method, getter)]
    fn writable(this: &IdentityTransformStream) -> web_sys::WritableStream;
}

/// The caller's side of the stream.
pub fn body(
    start: StreamStart,
    owner: StreamOwner,
    ctx: &Context,
) -> worker::Result<web_sys::ReadableStream> {
    let (late_tx, late_rx) = oneshot::channel::<LateUsage>();
    if owner.usage.is_some() {
        ctx.wait_until(async move {
            if let Ok(late) = late_rx.await {
                late.run().await;
            }
        });
    }
    let reporter = StreamReport::start(
        ctx,
        StreamReportTarget {
            env: owner.env.clone(),
            tenant: owner.tenant.clone(),
            provider: owner.settlement.provider.clone(),
            model: owner.settlement.report.model.clone(),
            probe: owner.settlement.report.probe,
            hold_ms: owner.probe_hold_ms,
        },
    );
    let state = RelayState::new(RelayParts {
        upstream: UpstreamSide {
            rest: None,
            relay: start.relay,
            decoder: start.decoder,
        },
        encoder: start.encoder,
        read_timeout_ms: start.read_timeout_ms,
        controller: start.controller,
        owner,
        reporter,
        started_ms: start.started_ms,
        late: late_tx,
    });
    let pipe = IdentityTransformStream::new()?;
    let writer = pipe.writable().get_writer()?;
    ctx.wait_until(pump(
        state,
        start.rest,
        writer,
        (start.first, start.finished),
    ));
    Ok(pipe.readable())
}

/// Writes to the caller's side and waits until it took the bytes; `false` once the caller went
/// away.
async fn write(writer: &web_sys::WritableStreamDefaultWriter, bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return true;
    }
    JsFuture::from(writer.write_with_chunk(&Uint8Array::from(bytes)))
        .await
        .is_ok()
}

async fn pump(
    mut state: RelayState,
    mut reader: BodyReader,
    writer: web_sys::WritableStreamDefaultWriter,
    (first, finished): (Vec<u8>, Option<StreamEnd>),
) {
    let first = state.relayed(first);
    if !write(&writer, &first).await {
        return gone(state, reader);
    }
    if let Some(end) = finished {
        return end_with(state, reader, &writer, (Vec::new(), end)).await;
    }
    // Settles only when the caller's side is cancelled: the pump closes it only after this loop.
    let mut closed = JsFuture::from(writer.closed());
    let mut timer: Option<Pin<Box<Delay>>> = None;
    loop {
        let idle = state.idle_left(now_ms()).unwrap_or(0);
        let t = timer.get_or_insert_with(|| Box::pin(Delay::from(Duration::from_millis(idle))));
        // `None`: the writer's `closed` settled, so the caller's side was cancelled.
        let read = {
            let read = pin!(reader.read_or(t.as_mut()));
            match select(read, &mut closed).await {
                Either::Left((read, _)) => Some(read),
                Either::Right(_) => None,
            }
        };
        let (bytes, end): Relayed = match read {
            None => return gone(state, reader),
            // The idle timer fired (the upstream may have made progress meanwhile).
            Some(Read::TimedOut) => {
                timer = None;
                if state.idle_left(now_ms()) != Some(0) {
                    continue;
                }
                let detail = format!("no chunk within {} ms", state.read_timeout_ms());
                state.on_failure(detail)
            }
            Some(Read::Chunk(bytes)) => state.on_chunk(bytes),
            Some(Read::End) => state.on_end(),
            Some(Read::Failed(e)) => state.on_failure(format!("upstream read failed: {e}")),
        };
        if let Some(end) = end {
            return end_with(state, reader, &writer, (bytes, end)).await;
        }
        if !write(&writer, &bytes).await {
            return gone(state, reader);
        }
    }
}

/// The stream ended: its last bytes go out, it settles, then the caller's side closes; what
/// follows a completed stream's end is drained.
async fn end_with(
    mut state: RelayState,
    reader: BodyReader,
    writer: &web_sys::WritableStreamDefaultWriter,
    (bytes, end): (Vec<u8>, StreamEnd),
) {
    // A caller gone before its last bytes went out leaves the stream unsettled, as one gone
    // earlier does.
    if !write(writer, &bytes).await {
        return gone(state, reader);
    }
    let completed = end == StreamEnd::Completed;
    if let Some(guard) = state.settling(&end) {
        guard.settle(end).await;
    }
    let _ = JsFuture::from(writer.close()).await;
    // Dropped before the drain, which may wait up to 16 s: what the state still owes (its usage
    // record) is handed off now.
    drop(state);
    if completed {
        drain(reader).await;
    }
}

/// The caller went away: the stream stays unsettled, and the rest of the body may still hold its
/// usage event (`RelayState`'s drop starts the late-usage read with it).
fn gone(mut state: RelayState, reader: BodyReader) {
    state.give_back(reader);
}
