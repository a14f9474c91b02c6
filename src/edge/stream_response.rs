//! A streamed answer on its way to the caller. The caller reads the readable side of the runtime's
//! native `IdentityTransformStream`, and one task under the request's `waitUntil` pumps into its
//! writable side what the relay makes of each upstream chunk: bytes are forwarded as they arrive
//! (never the whole body), each write awaited before the next read (backpressure). Past the first
//! event, `stream_pump` reads and writes from JavaScript, calling the relay once per chunk.
//!
//! The same task fails a stream whose upstream stays quiet too long (`read_timeout_ms`), appends
//! the error event to a failed read, ends the stream (its breaker hears how) before closing the caller's side, and
//! notices the caller going away (the writer's `closed` settles): then it hands the body to a
//! late-usage read. A caller who takes nothing for as long (backpressure from its side) is
//! treated as one who went away: its side is aborted and nothing counts against the provider
//! (`stream::idle`). `stream_relayed` holds the state and what it owes at the end.

use super::body_read::BodyReader;
use super::routing_client::{StreamReport, StreamReportTarget};
use super::stream_capture::StreamCapture;
use super::stream_pump::{drain, relay_middle, MiddleEnd};
use super::stream_relayed::{LateUsage, RelayParts, RelayState, Relayed, UpstreamSide};
use super::upstream::StreamStart;
use super::usage_sink::StreamHandOff;
use crate::cascade::OwedReport;
use crate::config::{CatalogModel, TenantId};
use crate::request::upstream_events::UpstreamEvents;
use crate::stream::StreamEnd;
use crate::usage::PendingUsage;
use futures::channel::oneshot;
use wasm_bindgen::prelude::*;
use worker::js_sys::Uint8Array;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Context, Env};

/// Who to tell how the stream ended.
pub struct StreamOwner {
    pub env: Env,
    pub tenant: TenantId,
    pub request_id: String,
    pub owed_report: OwedReport,
    /// A probe's timeout: while its stream runs, the probe is renewed for this long at a time.
    pub probe_hold_ms: u64,
    pub usage: Option<StreamUsageOwner>,
    /// A copy assembled for the response cache (`None`: the cache is not used).
    pub cache: Option<StreamCapture>,
}

/// The stream's usage record, waiting for its tokens: handed off when the stream ends,
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
            provider: owner.owed_report.provider.clone(),
            model: owner.owed_report.report.model.clone(),
            probe: owner.owed_report.report.probe,
            hold_ms: owner.probe_hold_ms,
        },
    );
    let state = RelayState::new(RelayParts {
        upstream: UpstreamSide {
            rest: None,
            events: UpstreamEvents::new(start.decoder, start.relay),
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
    reader: BodyReader,
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
    let Some((mut state, reader, middle)) = relay_middle(state, reader, &writer).await else {
        return;
    };
    let (bytes, end): Relayed = match middle {
        MiddleEnd::Gone => return gone(state, reader),
        MiddleEnd::Finished(bytes, end) => (bytes, Some(end)),
        MiddleEnd::Quiet(quiet) => match quiet.provider_failure() {
            Some(detail) => state.on_failure(detail),
            None => {
                // The caller's stall is its cancel: its side is cut, the stream abandoned.
                let reason = JsValue::from_str("the caller took no bytes for the idle window");
                let _ = writer.abort_with_reason(&reason);
                return gone(state, reader);
            }
        },
        MiddleEnd::Ended => state.on_end(),
        MiddleEnd::Failed(detail) => state.on_failure(detail),
    };
    // The relay ends a stream on each of these; were it already over, it is failed here.
    let end = end.unwrap_or_else(|| StreamEnd::Failed("the relay had already ended".to_owned()));
    end_with(state, reader, &writer, (bytes, end)).await
}

/// The stream ended: its last bytes go out, it ends (what it owes is carried out), then the caller's side closes; what
/// follows a completed stream's end is drained.
async fn end_with(
    mut state: RelayState,
    reader: BodyReader,
    writer: &web_sys::WritableStreamDefaultWriter,
    (bytes, end): (Vec<u8>, StreamEnd),
) {
    // A caller gone before its last bytes went out leaves the stream abandoned, as one gone
    // earlier does.
    if !write(writer, &bytes).await {
        return gone(state, reader);
    }
    let completed = end == StreamEnd::Completed;
    if let Some((guard, owed)) = state.ending(&end) {
        guard.carry_out(owed).await;
    }
    let _ = JsFuture::from(writer.close()).await;
    // Dropped before the drain, which may wait up to 16 s: what the state still owes (its usage
    // record) is handed off now.
    drop(state);
    if completed {
        drain(reader).await;
    }
}

/// The caller went away: the stream is abandoned, and the rest of the body may still hold its
/// usage event (`RelayState`'s drop starts the late-usage read with it).
fn gone(mut state: RelayState, reader: BodyReader) {
    state.give_back(reader);
}
