//! The trace export's runtime side: the isolate's batches (`traces::export`), POSTed to the
//! tenant's receiver under `waitUntil` by `traces::export::deliver`, and dropped spans counted
//! in the tenant's metrics.

use super::events::{fault, Fault};
use super::isolate::isolate;
use super::js_fetch::{self, Posted};
use crate::config::otel::OtelExport;
use crate::config::TenantId;
use crate::traces::export::{
    deliver as deliver_all, Collector, Sent, BATCH_WAIT_MS, POST_TIMEOUT_MS,
};
use crate::traces::span::Span;
use std::{cell::RefCell, future::Future, pin::Pin, time::Duration};
use worker::{Delay, Env};

/// Adds a request's spans; answers the delivery to run under `waitUntil` when none runs.
pub fn add(
    env: &Env,
    tenant: &TenantId,
    export: &OtelExport,
    spans: Vec<Span>,
) -> Option<impl Future<Output = ()> + 'static> {
    let exports = isolate(|i| i.exports.clone());
    let added = exports.borrow_mut().add(tenant, export, spans);
    let receiver = Receiver(env.clone(), RefCell::new(None));
    if added.dropped > 0 {
        receiver.dropped(tenant, added.dropped, "isolate's batch full");
    }
    let tenant = tenant.clone();
    let deliver = added.deliver.then_some(exports);
    let work = deliver.is_some() || receiver.1.borrow().is_some();
    work.then_some(async move {
        if let Some(exports) = deliver {
            Delay::from(Duration::from_millis(BATCH_WAIT_MS)).await;
            deliver_all(&exports, &tenant, &receiver).await;
        }
        // A count of dropped spans goes with the tenant's metrics, under the same `waitUntil`.
        let flush = receiver.1.borrow_mut().take();
        if let Some(flush) = flush {
            flush.await;
        }
    })
}

/// The receiver, and the metrics flush a dropped batch started.
struct Receiver(Env, RefCell<Option<Pin<Box<dyn Future<Output = ()>>>>>);

impl Collector for Receiver {
    async fn post(&self, export: &OtelExport, body: &[u8]) -> Sent {
        let mut headers = vec![("content-type", export.protocol.content_type())];
        headers.extend(export.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        match js_fetch::post(&export.endpoint, &headers, body, POST_TIMEOUT_MS, None).await {
            Posted::Answered { status, .. } if (200..300).contains(&status) => Sent::Taken,
            Posted::Answered { status, .. } => Sent::Refused(status),
            Posted::Failed(_) => Sent::Unreached,
            Posted::TimedOut => Sent::TimedOut,
        }
    }

    fn dropped(&self, tenant: &TenantId, spans: u64, why: &str) {
        fault(Fault::Otel {
            tenant: tenant.as_str(),
            spans,
            what: why,
        });
        if let Some(flush) = super::metrics_sink::add_dropped_spans(&self.0, tenant, spans) {
            *self.1.borrow_mut() = Some(Box::pin(flush));
        }
    }
}
