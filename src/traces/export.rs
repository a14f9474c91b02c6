//! An isolate's spans waiting for their tenant's receiver. Spans are added as requests end; one
//! delivery per tenant runs at a time under `waitUntil`, waits `BATCH_WAIT_MS`, then takes what
//! waits in batches, so the requests of that second share a POST. What a delivery did
//! not get taken is dropped and counted: a receiver that fails or hangs costs requests nothing
//! and holds no memory.

use super::span::Span;
use crate::config::otel::OtelExport;
use crate::config::{SortedMap, TenantId};
use std::cell::RefCell;

/// A delivery waits this long before its first POST, so that the requests of that second share
/// it: a POST per request would cost a busy tenant one more fetch per request.
pub const BATCH_WAIT_MS: u64 = 1_000;
/// How long one POST may take; a hung receiver is given up on after it (and not tried again).
pub const POST_TIMEOUT_MS: u64 = 10_000;
/// Spans one POST carries at most.
pub const MAX_BATCH: usize = 512;
/// Spans an isolate holds for one tenant at most; past it the oldest are dropped (and counted).
pub const MAX_WAITING: usize = 4_096;

struct Waiting {
    export: OtelExport,
    spans: Vec<Span>,
    /// A delivery for this tenant is running: it will take these.
    delivering: bool,
}

/// One POST's worth.
pub struct Batch {
    pub export: OtelExport,
    pub spans: Vec<Span>,
}

/// What a POST came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// A 2xx.
    Taken,
    /// The receiver answered otherwise (its status).
    Refused(u16),
    /// The connection failed.
    Unreached,
    /// No answer within the export's timeout: a hung receiver is not waited on twice.
    TimedOut,
}

impl Sent {
    fn why(self) -> String {
        match self {
            Self::Taken => "taken".to_owned(),
            Self::Refused(status) => format!("receiver answered {status}"),
            Self::Unreached => "receiver unreachable".to_owned(),
            Self::TimedOut => "receiver did not answer in time".to_owned(),
        }
    }
}

/// The receiver, as the delivery sees it.
#[allow(async_fn_in_trait)]
pub trait Collector {
    /// One POST of an encoded batch.
    async fn post(&self, export: &OtelExport, body: &[u8]) -> Sent;
    /// A batch of `spans` was dropped (`why`): counted in the tenant's metrics, and logged.
    fn dropped(&self, tenant: &TenantId, spans: u64, why: &str);
}

/// Marks the tenant's delivery as no longer running however it ends (its `waitUntil` may be
/// cancelled mid-POST), so spans added later start another.
struct Running<'a>(&'a RefCell<Exports>, &'a TenantId);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Ok(mut x) = self.0.try_borrow_mut() {
            x.abandon(self.1);
        }
    }
}

/// The tenant's delivery: batches POSTed one after another until none waits.
pub async fn deliver(exports: &RefCell<Exports>, tenant: &TenantId, collector: &impl Collector) {
    let _running = Running(exports, tenant);
    loop {
        let next = exports.borrow_mut().next_batch(tenant);
        let Some(batch) = next else {
            return;
        };
        let body = super::encode(batch.export.protocol, &batch.spans);
        let mut retried = false;
        loop {
            let sent = collector.post(&batch.export, &body).await;
            match after(sent, retried) {
                After::Next => break,
                After::Retry => retried = true,
                After::Drop => {
                    collector.dropped(tenant, batch.spans.len() as u64, &sent.why());
                    break;
                }
            }
        }
    }
}

/// What a delivery does after a POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    Next,
    /// Once, after a connection error.
    Retry,
    /// The batch is dropped and its spans counted.
    Drop,
}

/// A connection error is retried once; a refusal, or a second failure, drops the batch.
pub fn after(sent: Sent, retried: bool) -> After {
    match sent {
        Sent::Taken => After::Next,
        Sent::Unreached if !retried => After::Retry,
        Sent::Refused(_) | Sent::Unreached | Sent::TimedOut => After::Drop,
    }
}

#[derive(Default)]
pub struct Exports {
    waiting: SortedMap<TenantId, Waiting>,
}

/// What adding spans asks of the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// No delivery runs for the tenant: start one.
    pub deliver: bool,
    /// Spans dropped to stay within `MAX_WAITING`.
    pub dropped: u64,
}

impl Exports {
    /// Adds a request's spans under the tenant's current export settings.
    pub fn add(&mut self, tenant: &TenantId, export: &OtelExport, spans: Vec<Span>) -> Added {
        let w = self
            .waiting
            .entry(tenant.clone())
            .or_insert_with(|| Waiting {
                export: export.clone(),
                spans: Vec::new(),
                delivering: false,
            });
        if w.export != *export {
            w.export = export.clone();
        }
        w.spans.extend(spans);
        let over = w.spans.len().saturating_sub(MAX_WAITING);
        w.spans.drain(..over);
        let deliver = !w.delivering;
        w.delivering = true;
        Added {
            deliver,
            dropped: over as u64,
        }
    }

    /// The running delivery's next batch; `None` ends it (and a later `add` starts another).
    pub fn next_batch(&mut self, tenant: &TenantId) -> Option<Batch> {
        let w = self.waiting.get_mut(tenant)?;
        if w.spans.is_empty() {
            self.waiting.remove(tenant);
            return None;
        }
        let n = w.spans.len().min(MAX_BATCH);
        Some(Batch {
            export: w.export.clone(),
            spans: w.spans.drain(..n).collect(),
        })
    }

    /// A delivery that stopped before its end (its `waitUntil` cancelled): the next `add`
    /// starts another, and what waits is not lost to a delivery that will never run.
    pub fn abandon(&mut self, tenant: &TenantId) {
        if let Some(w) = self.waiting.get_mut(tenant) {
            w.delivering = false;
        }
    }
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
