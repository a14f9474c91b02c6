//! A streamed answer on its way to the caller. Past its first event the runtime pipes the rest of
//! the upstream body through a `TransformStream` whose callbacks call the relay synchronously, one
//! call per chunk, and the caller reads its other side: bytes are forwarded as they arrive (never
//! the whole body), and no Rust future is polled, no promise made, per chunk. A chunk the relay
//! passes on unchanged is forwarded as the same JavaScript object, not copied back out.
//!
//! One task under the request's `waitUntil` watches the pipe: it fails a stream whose upstream
//! stays quiet too long (one timer per `read_timeout_ms`, re-armed only when it fires), appends
//! the error event to a failed read, and, once the pipe let go, hands the rest of the body to a
//! late-usage read or drains it. `stream_relayed` holds the state and what it owes at the end.

use super::http::now_ms;
use super::js_fetch::describe;
use super::routing_client::{StreamReport, StreamReportTarget};
use super::stream_capture::StreamCapture;
use super::stream_relayed::{drain, LateUsage, RelayParts, RelayState, UpstreamSide};
use super::upstream::StreamStart;
use super::usage_sink::StreamHandOff;
use crate::cascade::Settlement;
use crate::config::{CatalogModel, TenantId};
use crate::stream::StreamEnd;
use crate::usage::PendingUsage;
use futures::channel::oneshot;
use futures::future::{select, Either};
use std::cell::RefCell;
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;
use wasm_bindgen::prelude::*;
use worker::js_sys::{Object, Promise, Reflect, Uint8Array};
use worker::wasm_bindgen_futures::{future_to_promise, JsFuture};
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
    /// The transform's `TransformStreamDefaultController`. Both calls are caught: they throw once
    /// the caller's side is gone, and a throw must not unwind through the relay.
    type RelayController;
    #[wasm_bindgen(method, catch)]
    fn enqueue(this: &RelayController, chunk: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn terminate(this: &RelayController) -> Result<(), JsValue>;
}

type Shared = Rc<RefCell<RelayState>>;
type Controller = Rc<RefCell<Option<RelayController>>>;

/// The transformer's callbacks: owned by the watching task, dropped once the pipe has settled
/// (after which the runtime calls none of them).
struct Callbacks {
    _start: Closure<dyn FnMut(RelayController) -> JsValue>,
    _transform: Closure<dyn FnMut(Uint8Array) -> JsValue>,
    _flush: Closure<dyn FnMut() -> JsValue>,
}

/// The caller's side of the stream: the transform's readable half, piped from the upstream body.
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
    let rest = start.rest;
    let state: Shared = Rc::new(RefCell::new(RelayState::new(RelayParts {
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
    })));
    let controller: Controller = Rc::new(RefCell::new(None));
    let callbacks = callbacks(&state, &controller, (start.first, start.finished));
    let transformer = Object::new();
    for (name, f) in [
        ("start", callbacks._start.as_ref()),
        ("transform", callbacks._transform.as_ref()),
        ("flush", callbacks._flush.as_ref()),
    ] {
        Reflect::set(&transformer, &JsValue::from_str(name), f)?;
    }
    let transform = web_sys::TransformStream::new_with_transformer(&transformer)?;
    let writable = transform.writable();
    let options = web_sys::StreamPipeOptions::new();
    // The pipe neither aborts the caller's side when the upstream read fails (the relay appends
    // its error event first) nor cancels the upstream when the caller goes away (a late-usage
    // read may still want it).
    options.set_prevent_abort(true);
    options.set_prevent_cancel(true);
    let pipe = rest.pipe_to_with_options(&writable, &options);
    ctx.wait_until(watch(state, controller, callbacks, pipe, (rest, writable)));
    Ok(transform.readable())
}

fn callbacks(
    state: &Shared,
    controller: &Controller,
    first: (Vec<u8>, Option<StreamEnd>),
) -> Callbacks {
    let mut first = Some(first);
    let (st, ctl) = (state.clone(), controller.clone());
    let start = Closure::new(move |c: RelayController| -> JsValue {
        *ctl.borrow_mut() = Some(c);
        let Some((bytes, finished)) = first.take() else {
            return JsValue::UNDEFINED;
        };
        let out = st.borrow_mut().relayed(bytes);
        forward(&ctl, &out);
        match finished {
            Some(end) => {
                st.borrow_mut().ended_early();
                ending(st.clone(), ctl.clone(), end, true).into()
            }
            None => JsValue::UNDEFINED,
        }
    });
    let (st, ctl) = (state.clone(), controller.clone());
    let transform = Closure::new(move |chunk: Uint8Array| -> JsValue {
        let bytes = chunk.to_vec();
        let (out, end) = st.borrow_mut().on_chunk(bytes.clone());
        if out == bytes {
            enqueue(&ctl, &chunk);
        } else {
            forward(&ctl, &out);
        }
        match end {
            Some(end) => ending(st.clone(), ctl.clone(), end, true).into(),
            None => JsValue::UNDEFINED,
        }
    });
    let (st, ctl) = (state.clone(), controller.clone());
    let flush = Closure::new(move || -> JsValue {
        let (out, end) = st.borrow_mut().on_end();
        forward(&ctl, &out);
        match end {
            // The flush's promise closes the caller's side once the stream has settled.
            Some(end) => ending(st.clone(), ctl.clone(), end, false).into(),
            None => JsValue::UNDEFINED,
        }
    });
    Callbacks {
        _start: start,
        _transform: transform,
        _flush: flush,
    }
}

fn enqueue(controller: &Controller, chunk: &JsValue) {
    if let Some(c) = controller.borrow().as_ref() {
        // Throws only when the caller's side is gone; the watching task sees that.
        let _ = c.enqueue(chunk);
    }
}

fn forward(controller: &Controller, bytes: &[u8]) {
    if !bytes.is_empty() {
        enqueue(controller, &Uint8Array::from(bytes).into());
    }
}

/// Settles the stream, then (unless a flush's promise does it) closes the caller's side: the
/// breaker hears how the stream ended before the caller sees the end.
fn ending(state: Shared, controller: Controller, end: StreamEnd, terminate: bool) -> Promise {
    future_to_promise(async move {
        finish(&state, &controller, end, terminate).await;
        Ok(JsValue::UNDEFINED)
    })
}

async fn finish(state: &Shared, controller: &Controller, end: StreamEnd, terminate: bool) {
    let guard = state.borrow_mut().settling(&end);
    if let Some(guard) = guard {
        guard.settle(end).await;
    }
    if terminate {
        if let Some(c) = controller.borrow().as_ref() {
            let _ = c.terminate();
        }
    }
}

/// The task that watches the pipe until it settles; see the module's doc.
async fn watch(
    state: Shared,
    controller: Controller,
    callbacks: Callbacks,
    pipe: Promise,
    (rest, writable): (web_sys::ReadableStream, web_sys::WritableStream),
) {
    let mut pipe = pin!(JsFuture::from(pipe));
    let outcome = loop {
        let left = state.borrow().idle_left(now_ms());
        match left {
            None => break pipe.as_mut().await,
            Some(0) => {
                let detail = format!("no chunk within {} ms", state.borrow().read_timeout_ms());
                fail(&state, &controller, detail).await;
            }
            Some(left) => {
                let timer = pin!(Delay::from(Duration::from_millis(left)));
                if let Either::Left((outcome, _)) = select(pipe.as_mut(), timer).await {
                    break outcome;
                }
            }
        }
    };
    if let Err(e) = outcome {
        if !state.borrow().is_over() && !caller_gone(&writable) {
            fail(
                &state,
                &controller,
                format!("upstream read failed: {}", describe(e)),
            )
            .await;
        }
    }
    drop(callbacks);
    // A caller who went away leaves the stream unsettled: the rest of the body may still hold
    // its usage event. A stream that ended has what follows its end drained (a failed one's
    // upstream is already cancelled, so that read ends at once).
    let over = state.borrow().is_over();
    if over {
        drain(rest).await;
    } else {
        state.borrow_mut().give_back(rest);
    }
}

/// Appends the error event and settles the stream as failed.
async fn fail(state: &Shared, controller: &Controller, detail: String) {
    let (out, end) = state.borrow_mut().on_failure(detail);
    forward(controller, &out);
    if let Some(end) = end {
        finish(state, controller, end, true).await;
    }
}

/// The caller's side was cancelled: the transform's writable side is errored then (a writer's
/// `desiredSize` is null), which neither an upstream failure nor the relay's own end does.
fn caller_gone(writable: &web_sys::WritableStream) -> bool {
    match writable.get_writer() {
        Ok(writer) => {
            let gone = matches!(writer.desired_size(), Ok(None) | Err(_));
            writer.release_lock();
            gone
        }
        Err(_) => true,
    }
}
