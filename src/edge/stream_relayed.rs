//! What a streamed answer's relay keeps while the stream runs, and what it owes when it ends.
//!
//! The stream ends once, whichever way it ends (`[DONE]`, an upstream failure, no chunk in
//! time while a read was pending): its breaker hears how it ended before the caller sees the end.
//! A caller who goes away, or takes nothing for the idle window, leaves it abandoned: the
//! upstream read is cancelled (after the short late-usage read below) without anything being
//! held against the model.
//!
//! Its usage record is handed off when this state goes away, whichever way the stream ended: the
//! reported usage, or the estimate (`usage::estimate`) when the usage event never came. When the
//! caller went away before the usage event, the upstream is read on for a little while
//! (`LATE_USAGE_MS`, `LATE_USAGE_BYTES`) under the request's `waitUntil`, nothing of it forwarded,
//! and the one record waits for it: the provider's own usage if its event comes in that time (the
//! exact charge, no estimate to correct), the estimate otherwise. The reservation keeps the
//! budget covered meanwhile.

use super::body_read::{BodyReader, Read};
use super::events::{fault, Fault};
use super::http::now_ms;
use super::live_stats;
use super::routing_client::StreamReport;
use super::stream_capture::StreamCapture;
use super::stream_response::{StreamOwner, StreamUsageOwner};
use super::usage_sink::StreamHandOff;
use crate::config::CatalogModel;
use crate::request::stream_life::{bill, late_bill, Bill, Life, Owed};
use crate::request::upstream_events::{PlainMiddle, UpstreamEvents};
use crate::routing::stats::model_stats::Sample;
use crate::stream::{RelayStep, StreamEnd};
use crate::surfaces::Encoder;
use crate::usage::{PendingUsage, UsageRecord};
use futures::channel::oneshot;
use worker::AbortController;

/// How long, and how many bytes, the upstream is read on for its usage event after the caller
/// went away. Short: the provider keeps generating (and billing) while it is read.
const LATE_USAGE_MS: u64 = 2_000;
const LATE_USAGE_BYTES: usize = 256 * 1024;

/// The upstream side of a stream: its events as the relay reads them, and the rest of its body
/// once the relay's pump has handed it back.
pub(super) struct UpstreamSide {
    pub rest: Option<BodyReader>,
    pub events: UpstreamEvents,
}

/// What one step of the relay gives: bytes for the caller, and the stream's end if it came.
pub(super) type Relayed = (Vec<u8>, Option<StreamEnd>);

pub(super) struct RelayState {
    /// Set once the stream ended (or is ending): nothing more is read into it.
    over: bool,
    /// Taken by a late-usage read when the caller goes away.
    upstream: Option<UpstreamSide>,
    encoder: Encoder,
    read_timeout_ms: u64,
    last_chunk_ms: u64,
    /// Taken when the stream ends: still here when this state goes away means the caller did.
    guard: Option<CancelGuard>,
    usage: Option<StreamUsageOwner>,
    /// Starts the late-usage read under the request's `waitUntil`.
    late: Option<oneshot::Sender<LateUsage>>,
    capture: Option<StreamCapture>,
}

/// The parts of a stream's state, as `stream_response::body` assembles them.
pub(super) struct RelayParts {
    pub upstream: UpstreamSide,
    pub encoder: Encoder,
    pub read_timeout_ms: u64,
    pub controller: AbortController,
    pub owner: StreamOwner,
    pub reporter: StreamReport,
    pub started_ms: u64,
    pub late: oneshot::Sender<LateUsage>,
}

impl RelayState {
    pub fn new(mut p: RelayParts) -> Self {
        let usage = p.owner.usage.take();
        let capture = p.owner.cache.take();
        Self {
            over: false,
            upstream: Some(p.upstream),
            encoder: p.encoder,
            read_timeout_ms: p.read_timeout_ms,
            last_chunk_ms: now_ms(),
            guard: Some(CancelGuard {
                life: Life::Relaying,
                controller: Some(p.controller),
                owner: Some(p.owner),
                reporter: p.reporter,
                started_ms: p.started_ms,
            }),
            usage,
            late: Some(p.late),
            capture,
        }
    }

    /// Relayed chat chunks, copied for the response cache before the surface's encoder.
    pub fn relayed(&mut self, bytes: Vec<u8>) -> Vec<u8> {
        if let Some(c) = self.capture.as_mut() {
            c.push(&bytes);
        }
        self.encoder.push(bytes)
    }

    /// One chunk of the upstream body.
    pub fn on_chunk(&mut self, chunk: Vec<u8>) -> Relayed {
        self.last_chunk_ms = now_ms();
        self.step(|up| up.events.on_chunk(chunk))
    }

    /// The upstream body ended.
    pub fn on_end(&mut self) -> Relayed {
        self.step(|up| up.events.on_end())
    }

    /// The upstream read failed, or no chunk came in time.
    pub fn on_failure(&mut self, detail: String) -> Relayed {
        self.step(|up| up.events.on_failure(detail))
    }

    fn step(&mut self, f: impl FnOnce(&mut UpstreamSide) -> RelayStep) -> Relayed {
        if self.over {
            return (Vec::new(), None);
        }
        let Some(up) = self.upstream.as_mut() else {
            return (Vec::new(), None);
        };
        match f(up) {
            RelayStep::Forward(out) => (self.relayed(out), None),
            RelayStep::Finish { bytes, end } => {
                self.over = true;
                (self.relayed(bytes), Some(end))
            }
        }
    }

    /// When the upstream's shape is the caller's and nothing re-encodes it, the pump may pass
    /// whole plain events as sent (`stream_pump.js`): then the part-read event the relay holds
    /// goes to the pump, which asks the relay only about events that may need it.
    pub fn plain_middle(&mut self) -> Option<PlainMiddle> {
        let (plain, capturing) = (self.encoder.passes_plain_events(), self.capture.is_some());
        let up = self.upstream.as_mut().filter(|_| !self.over)?;
        up.events.plain_middle(plain, capturing)
    }

    /// Events the pump passed to the caller as sent: metered, and copied for the cache.
    pub fn absorb(&mut self, passed: Vec<u8>) {
        if let Some(c) = self.capture.as_mut() {
            c.push(&passed);
        }
        if let Some(up) = self.upstream.as_mut() {
            up.events.read_passed(passed);
        }
    }

    /// Whether the stream's end still needs the events the pump passed: for the cache's copy,
    /// or for an estimate while the usage has not come.
    pub fn needs_passed(&self) -> bool {
        let capturing = self.capture.is_some();
        (self.upstream.as_ref()).is_some_and(|up| up.events.needs_passed(capturing))
    }

    /// The event the pump had begun to read: the relay's again, for a late read to go on from.
    pub fn hold(&mut self, part: Vec<u8>) {
        if let Some(up) = self.upstream.as_mut() {
            up.events.read_passed(part);
        }
    }

    pub fn read_timeout_ms(&self) -> u64 {
        self.read_timeout_ms
    }

    /// When the last upstream chunk came (ms since the epoch).
    pub fn last_chunk_ms(&self) -> u64 {
        self.last_chunk_ms
    }

    /// The guard the stream ends with, and what its end owes (once); a completed stream's
    /// copy goes to the cache.
    pub fn ending(&mut self, end: &StreamEnd) -> Option<(CancelGuard, Owed)> {
        self.over = true;
        let mut guard = self.guard.take()?;
        let owed = guard.end(end)?;
        if let (true, Some(up)) = (owed.store_copy, self.upstream.as_ref()) {
            if let Some(capture) = self.capture.take() {
                capture.completed(up.events.tokens());
            }
        }
        Some((guard, owed))
    }

    /// The rest of the body back from the pump, for a late-usage read.
    pub fn give_back(&mut self, rest: BodyReader) {
        if let Some(up) = self.upstream.as_mut() {
            up.rest = Some(rest);
        }
    }
}

/// However the stream ends, its state goes away once: that is when its usage is handed off.
impl Drop for RelayState {
    fn drop(&mut self) {
        let (Some(mut u), Some(up)) = (self.usage.take(), self.upstream.take()) else {
            return;
        };
        // The guard is still here only when the stream never ended.
        let life = self.guard.as_ref().map_or(Life::Ended, |g| g.life);
        let usage = up.events.relay().usage().final_tokens(u.prompt_estimate);
        match (
            bill(life, &u.pending, &u.model, usage, now_ms()),
            self.late.take(),
        ) {
            (Bill::AfterLateRead(estimate), Some(late)) => {
                // Sending fails only if the late read's task is gone: then the late value comes
                // back and its drop hands off the estimate.
                let _ = late.send(LateUsage {
                    upstream: up,
                    controller: self.guard.as_mut().and_then(|g| g.controller.take()),
                    pending: u.pending,
                    model: u.model,
                    estimate,
                    hand_off: u.hand_off,
                });
            }
            (Bill::Now(record) | Bill::AfterLateRead(record), _) => u.hand_off.send(record),
        }
    }
}

/// What reads on after the caller went away, to catch a late usage event. It owns the request's
/// one record: whatever happens to it (the read ends, or the future is dropped), the estimate goes
/// unless the reported usage went first.
pub(super) struct LateUsage {
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
    pub async fn run(mut self) {
        let until = now_ms().saturating_add(LATE_USAGE_MS);
        let mut read = 0usize;
        let up = &mut self.upstream;
        if let Some(mut reader) = up.rest.take() {
            while up.events.awaits_usage() && read < LATE_USAGE_BYTES {
                let left = until.saturating_sub(now_ms());
                if left == 0 {
                    break;
                }
                let Read::Chunk(bytes) = reader.read(left).await else {
                    break;
                };
                read = read.saturating_add(bytes.len());
                if let RelayStep::Finish { .. } = up.events.on_chunk(bytes) {
                    break;
                }
            }
        }
        if let Some(c) = self.controller.take() {
            c.abort();
        }
        let usage = up.events.relay().usage().final_tokens(0);
        if let Some(record) = late_bill(&self.pending, &self.model, &self.estimate, usage) {
            self.hand_off.send(record);
        }
    }
}

/// Aborts the upstream read if the stream goes away before it ended (the caller went away).
pub(super) struct CancelGuard {
    life: Life,
    controller: Option<AbortController>,
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

    /// What the stream's end owes (`request::stream_life`); `None` once owed.
    fn end(&mut self, end: &StreamEnd) -> Option<Owed> {
        let owed_report = self.owner.as_ref()?.owed_report.clone();
        self.life.end(end, owed_report, (self.started_ms, now_ms()))
    }

    /// After the last byte went out, before the caller sees the end: the breaker hears how the
    /// stream ended.
    pub async fn carry_out(mut self, owed: Owed) {
        if owed.abort_upstream {
            // A failed upstream is not read any further.
            self.abort();
        }
        // Settled: dropping the guard now cancels nothing.
        self.controller = None;
        let Some(owner) = self.owner.take() else {
            return;
        };
        let (provider, model) = (&owner.owed_report.provider, &owner.owed_report.report.model);
        if let Some(detail) = &owed.failed {
            fault(Fault::StreamFailed {
                request_id: &owner.request_id,
                tenant: owner.tenant.as_str(),
                provider: provider.as_str(),
                model: model.as_str(),
                error: detail,
            });
        }
        if let Some(latency_ms) = owed.finished_ms {
            // Counted as served at its first event; its total time is known only now.
            let finished = Sample::Finished { latency_ms };
            live_stats::record(&owner.tenant, provider.as_str(), model.as_str(), finished);
        }
        if let Some(report) = owed.report {
            self.reporter.send(report);
        }
        self.reporter.sent().await;
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        // An ended guard has given up its owner; one not ended means the caller went away.
        let Some(owner) = self.owner.take() else {
            return;
        };
        let Some(owed) = self.life.abandon(owner.owed_report) else {
            return;
        };
        if owed.abort_upstream {
            self.abort();
        }
        if let Some(report) = owed.report {
            self.reporter.send(report);
        }
    }
}
