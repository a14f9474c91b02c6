//! A streamed answer on its way to the caller: bytes are forwarded as they arrive (never the whole
//! body), the stream's end settles the candidate's breaker, and a caller who goes away cancels
//! the upstream read without anything being held against the model.

use super::body_read::{read_chunk, Read, WatchedBody};
use super::http::now_ms;
use super::routing_client::{StreamReport, StreamReportTarget};
use super::upstream::StreamStart;
use super::usage_sink::StreamHandOff;
use crate::cascade::Settlement;
use crate::config::{CatalogModel, TenantId};
use crate::providers::StreamDecoder;
use crate::stream::{Relay, RelayStep, StreamEnd};
use crate::surfaces::Encoder;
use crate::usage::PendingUsage;
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
}

/// The stream's usage record, waiting for its tokens: handed off when the stream settles,
/// whichever way (end, cut, or the caller going away), with what the relay read by then.
pub struct StreamUsageOwner {
    pub pending: PendingUsage,
    /// The model that serves the stream, whose prices it is charged at.
    pub model: CatalogModel,
    pub hand_off: StreamHandOff,
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
    rest: WatchedBody,
    relay: Relay,
    decoder: StreamDecoder,
    encoder: Encoder,
    read_timeout_ms: u64,
    guard: CancelGuard,
    usage: Option<StreamUsageOwner>,
}

/// However the stream ends, its state goes away once: that is when its usage is handed off.
impl Drop for State {
    fn drop(&mut self) {
        if let Some(mut u) = self.usage.take() {
            let record = u.pending.served(now_ms(), &u.model, self.relay.tokens());
            u.hand_off.send(record);
        }
    }
}

pub fn body(
    start: StreamStart,
    mut owner: StreamOwner,
    ctx: &Context,
) -> impl Stream<Item = worker::Result<Vec<u8>>> {
    let usage = owner.usage.take();
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
        rest: WatchedBody::new(start.rest, start.read_timeout_ms),
        relay: start.relay,
        decoder: start.decoder,
        encoder: start.encoder,
        read_timeout_ms: start.read_timeout_ms,
        guard: CancelGuard {
            controller: Some(start.controller),
            finished: false,
            owner: Some(owner),
            reporter,
        },
        usage,
    };
    stream::unfold(state, |mut st| async move {
        loop {
            match std::mem::replace(&mut st.phase, Phase::Over) {
                Phase::First(bytes, finished) => {
                    st.phase = finished.map_or(Phase::Reading, Phase::Settle);
                    let bytes = st.encoder.push(bytes);
                    return Some((Ok(bytes), st));
                }
                Phase::Reading => {
                    let step = match st.rest.next().await {
                        Read::Chunk(bytes) => st.relay.on_chunk(&st.decoder.decode(bytes)),
                        Read::End => st.relay.on_end(),
                        Read::Failed(e) => {
                            st.relay.on_failure(format!("upstream read failed: {e}"))
                        }
                        Read::TimedOut => st
                            .relay
                            .on_failure(format!("no chunk within {} ms", st.read_timeout_ms)),
                    };
                    match step {
                        RelayStep::Forward(out) => {
                            st.phase = Phase::Reading;
                            let out = st.encoder.push(out);
                            if !out.is_empty() {
                                return Some((Ok(out), st));
                            }
                        }
                        RelayStep::Finish { bytes, end } => {
                            st.phase = Phase::Settle(end);
                            let bytes = st.encoder.push(bytes);
                            return Some((Ok(bytes), st));
                        }
                    }
                }
                Phase::Settle(end) => {
                    if end == StreamEnd::Completed {
                        drain(st.rest.body_mut()).await;
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
    guard.reporter.send(owner.settlement.after_stream(&end));
    guard.reporter.sent().await;
}
