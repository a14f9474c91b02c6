//! A streamed answer on its way to the caller: bytes are forwarded as they arrive (never the whole
//! body), the stream's end settles the candidate's breaker, and a caller who goes away cancels
//! the upstream read (after the short late-usage read below) without anything being held against
//! the model.
//!
//! Its usage record is handed off when the stream's state goes away, whichever way it ended: the
//! reported usage, or the estimate (`usage::estimate`) when the usage event never came. When the
//! caller went away before the usage event, the upstream is read on for a little while
//! (`LATE_USAGE_MS`, `LATE_USAGE_BYTES`) under the request's `waitUntil`, nothing of it forwarded,
//! and the one record waits for it: the provider's own usage if its event comes in that time (the
//! exact charge, no estimate to correct), the estimate otherwise. The reservation keeps the
//! budget covered meanwhile.

use super::body_read::{read_chunk, Read, WatchedBody};
use super::http::now_ms;
use super::live_stats;
use super::routing_client::{StreamReport, StreamReportTarget};
use super::stream_capture::StreamCapture;
use super::upstream::StreamStart;
use super::usage_sink::StreamHandOff;
use crate::cascade::Settlement;
use crate::config::{CatalogModel, TenantId};
use crate::providers::StreamDecoder;
use crate::state::model_stats::Sample;
use crate::stream::{Relay, RelayStep, StreamEnd};
use crate::surfaces::Encoder;
use crate::usage::{PendingUsage, UsageRecord, UsageSource};
use futures::channel::oneshot;
use futures::stream::{self, Stream};
use worker::{console_log, AbortController, ByteStream, Context, Env};

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

/// How long, and how many bytes, the upstream is read on for its usage event after the caller
/// went away. Short: the provider keeps generating (and billing) while it is read.
const LATE_USAGE_MS: u64 = 2_000;
const LATE_USAGE_BYTES: usize = 256 * 1024;

/// The upstream side of a stream: the body, the relay that meters it, and the decoder that puts
/// it in chat (or marked native) events.
struct UpstreamSide {
    rest: WatchedBody,
    relay: Relay,
    decoder: StreamDecoder,
}

/// What reads on after the caller went away, to catch a late usage event. It owns the request's
/// one record: whatever happens to it (the read ends, or the future is dropped), the estimate goes
/// unless the reported usage went first.
struct LateUsage {
    upstream: UpstreamSide,
    controller: Option<AbortController>,
    pending: PendingUsage,
    model: CatalogModel,
    estimate: UsageRecord,
    hand_off: StreamHandOff,
}

impl Drop for LateUsage {
    fn drop(&mut self) {
        // A no-op once `run` sent the reported record (a hand-off sends once).
        self.hand_off.send(self.estimate.clone());
    }
}

impl LateUsage {
    async fn run(mut self) {
        let until = now_ms().saturating_add(LATE_USAGE_MS);
        let mut read = 0usize;
        let up = &mut self.upstream;
        while !up.relay.usage().complete() && read < LATE_USAGE_BYTES {
            let left = until.saturating_sub(now_ms());
            if left == 0 {
                break;
            }
            let Read::Chunk(bytes) = read_chunk(up.rest.body_mut(), left).await else {
                break;
            };
            read = read.saturating_add(bytes.len());
            if let RelayStep::Finish { .. } = up.relay.on_chunk(&up.decoder.decode(bytes)) {
                break;
            }
        }
        if let Some(c) = self.controller.take() {
            c.abort();
        }
        let (tokens, source) = up.relay.usage().settle(0);
        if source == UsageSource::Reported {
            let record =
                self.pending
                    .clone()
                    .served(self.estimate.at_ms, &self.model, (tokens, source));
            self.hand_off.send(record);
        }
    }
}

enum Phase {
    First(Vec<u8>, Option<StreamEnd>),
    Reading,
    Settle(StreamEnd),
    Over,
}

/// Aborts the upstream read if the body is dropped before it finished (the caller went away).
struct CancelGuard {
    controller: Option<AbortController>,
    finished: bool,
    owner: Option<StreamOwner>,
    /// Sends the report under the request's `waitUntil`, whichever way the stream ends.
    reporter: StreamReport,
    /// When the served try's upstream request was sent: a completed stream's total time.
    started_ms: u64,
}

impl CancelGuard {
    fn abort(&mut self) {
        if let Some(c) = self.controller.take() {
            c.abort();
        }
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.abort();
        // The caller went away: the core decides what, if anything, is still reported.
        if let Some(report) = self.owner.take().and_then(|o| o.settlement.after_cancel()) {
            self.reporter.send(report);
        }
    }
}

struct State {
    phase: Phase,
    /// Taken by a late-usage read when the caller goes away.
    upstream: Option<UpstreamSide>,
    encoder: Encoder,
    read_timeout_ms: u64,
    guard: CancelGuard,
    usage: Option<StreamUsageOwner>,
    /// Starts the late-usage read under the request's `waitUntil`.
    late: Option<oneshot::Sender<LateUsage>>,
    capture: Option<StreamCapture>,
}

impl State {
    /// Relayed chat chunks, copied for the response cache before the surface's encoder.
    fn relayed(&mut self, bytes: Vec<u8>) -> Vec<u8> {
        if let Some(c) = self.capture.as_mut() {
            c.push(&bytes);
        }
        self.encoder.push(bytes)
    }
}

/// However the stream ends, its state goes away once: that is when its usage is handed off.
impl Drop for State {
    fn drop(&mut self) {
        let (Some(mut u), Some(up)) = (self.usage.take(), self.upstream.take()) else {
            return;
        };
        let (tokens, source) = up.relay.usage().settle(u.prompt_estimate);
        let record = u
            .pending
            .clone()
            .served(now_ms(), &u.model, (tokens, source));
        // Only a caller who went away leaves an upstream that may still report.
        let caller_left = !self.guard.finished;
        match (source, caller_left, self.late.take()) {
            (UsageSource::Estimated, true, Some(late)) => {
                // Sending fails only if the late read's task is gone: then the late value comes
                // back and its drop hands off the estimate.
                let _ = late.send(LateUsage {
                    upstream: up,
                    controller: self.guard.controller.take(),
                    pending: u.pending,
                    model: u.model,
                    estimate: record,
                    hand_off: u.hand_off,
                });
            }
            _ => u.hand_off.send(record),
        }
    }
}

pub fn body(
    start: StreamStart,
    mut owner: StreamOwner,
    ctx: &Context,
) -> impl Stream<Item = worker::Result<Vec<u8>>> {
    let usage = owner.usage.take();
    let capture = owner.cache.take();
    let (late_tx, late_rx) = oneshot::channel::<LateUsage>();
    if usage.is_some() {
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
    let state = State {
        phase: Phase::First(start.first, start.finished),
        upstream: Some(UpstreamSide {
            rest: WatchedBody::new(start.rest, start.read_timeout_ms),
            relay: start.relay,
            decoder: start.decoder,
        }),
        encoder: start.encoder,
        read_timeout_ms: start.read_timeout_ms,
        guard: CancelGuard {
            controller: Some(start.controller),
            finished: false,
            owner: Some(owner),
            reporter,
            started_ms: start.started_ms,
        },
        usage,
        late: Some(late_tx),
        capture,
    };
    stream::unfold(state, |mut st| async move {
        loop {
            match std::mem::replace(&mut st.phase, Phase::Over) {
                Phase::First(bytes, finished) => {
                    st.phase = finished.map_or(Phase::Reading, Phase::Settle);
                    let bytes = st.relayed(bytes);
                    return Some((Ok(bytes), st));
                }
                Phase::Reading => {
                    let up = st.upstream.as_mut()?;
                    let step = match up.rest.next().await {
                        Read::Chunk(bytes) => up.relay.on_chunk(&up.decoder.decode(bytes)),
                        Read::End => up.relay.on_end(),
                        Read::Failed(e) => {
                            up.relay.on_failure(format!("upstream read failed: {e}"))
                        }
                        Read::TimedOut => up
                            .relay
                            .on_failure(format!("no chunk within {} ms", st.read_timeout_ms)),
                    };
                    match step {
                        RelayStep::Forward(out) => {
                            st.phase = Phase::Reading;
                            let out = st.relayed(out);
                            if !out.is_empty() {
                                return Some((Ok(out), st));
                            }
                        }
                        RelayStep::Finish { bytes, end } => {
                            st.phase = Phase::Settle(end);
                            let bytes = st.relayed(bytes);
                            return Some((Ok(bytes), st));
                        }
                    }
                }
                Phase::Settle(end) => {
                    if let (StreamEnd::Completed, Some(up)) = (&end, st.upstream.as_mut()) {
                        if let Some(capture) = st.capture.take() {
                            capture.completed(up.relay.tokens());
                        }
                        drain(up.rest.body_mut()).await;
                    }
                    settle(&mut st.guard, end).await;
                    return None;
                }
                Phase::Over => return None,
            }
        }
    })
}

/// Reads what follows `[DONE]` (normally just the end of the body) so the upstream connection
/// can be reused, within a small bound.
async fn drain(rest: &mut ByteStream) {
    for _ in 0..16 {
        if !matches!(read_chunk(rest, 1_000).await, Read::Chunk(_)) {
            return;
        }
    }
}

/// After the last byte went out: the breaker hears how the stream ended.
async fn settle(guard: &mut CancelGuard, end: StreamEnd) {
    guard.finished = true;
    if end != StreamEnd::Completed {
        // A failed upstream is not read any further.
        guard.abort();
    }
    let Some(owner) = guard.owner.take() else {
        return;
    };
    if let StreamEnd::Failed(detail) = &end {
        console_log!(
            "{}",
            serde_json::json!({
                "msg": "stream failed after the first byte",
                "request_id": owner.request_id,
                "tenant": owner.tenant,
                "provider": owner.settlement.provider,
                "model": owner.settlement.report.model,
                "error": detail,
            })
        );
    }
    if end == StreamEnd::Completed {
        // Counted as served at its first event; its total time is known only now (issue 22).
        let latency_ms = now_ms().saturating_sub(guard.started_ms);
        let (provider, model) = (&owner.settlement.provider, &owner.settlement.report.model);
        let finished = Sample::Finished { latency_ms };
        live_stats::record(&owner.tenant, provider.as_str(), model.as_str(), finished);
    }
    guard.reporter.send(owner.settlement.after_stream(&end));
    guard.reporter.sent().await;
}
