//! The report a streamed answer still owes its routing object when the stream ends, and the
//! probe hold renewed while it runs.

use super::events::{fault, Fault};
use super::routing_client::{call_object, send_report, transition_event};
use super::routing_object::HoldRequest;
use super::store;
use crate::config::{ModelId, ProviderName, TenantId};
use crate::health::ReportRequest;
use futures::channel::oneshot;
use futures::future::{select, Either};
use std::pin::pin;
use std::time::Duration;
use worker::{Context, Delay, Env, Method, Result};

/// The report a streamed answer still owes, sent by a task registered under the request's
/// `waitUntil` when the response is made, so it runs to the end however the stream ends (drained,
/// failed, or dropped by a caller who went away). While the stream of a half-open probe runs, the
/// same task renews the probe's hold every half `hold_ms`, so no second probe gets in however
/// long the stream lasts; if this isolate dies, the renewals stop and the probe lapses after
/// `hold_ms` as before.
pub struct StreamReport {
    report: Option<oneshot::Sender<ReportRequest>>,
    sent: Option<oneshot::Receiver<()>>,
}

pub struct StreamReportTarget {
    pub env: Env,
    pub tenant: TenantId,
    pub provider: ProviderName,
    pub model: ModelId,
    pub probe: Option<u64>,
    /// The probe's timeout (the request budget): each renewal holds it this much longer.
    pub hold_ms: u64,
}

impl StreamReport {
    pub fn start(ctx: &Context, target: StreamReportTarget) -> Self {
        let (report_tx, report_rx) = oneshot::channel::<ReportRequest>();
        let (sent_tx, sent_rx) = oneshot::channel::<()>();
        ctx.wait_until(async move {
            if let Some(report) = hold_until_reported(&target, report_rx).await {
                report_detached(&target.env, &target.tenant, &target.provider, report).await;
            }
            let _ = sent_tx.send(());
        });
        Self {
            report: Some(report_tx),
            sent: Some(sent_rx),
        }
    }

    /// Hands the final report over; synchronous, so it can be called from `Drop`. Dropping a
    /// `StreamReport` without calling it sends nothing.
    pub fn send(&mut self, report: ReportRequest) {
        if let Some(tx) = self.report.take() {
            let _ = tx.send(report);
        }
    }

    /// Waits until the handed-over report has been sent, so a stream's end follows its report.
    pub async fn sent(&mut self) {
        if let Some(rx) = self.sent.take() {
            let _ = rx.await;
        }
    }
}

/// Waits for the stream's report, renewing the probe's hold meanwhile; `None` if the stream
/// went without handing one over.
async fn hold_until_reported(
    target: &StreamReportTarget,
    mut report: oneshot::Receiver<ReportRequest>,
) -> Option<ReportRequest> {
    let Some(probe) = target.probe else {
        return report.await.ok();
    };
    let every = Duration::from_millis((target.hold_ms / 2).max(1));
    loop {
        // Renew at once too: the first byte may have come late in the probe's first window.
        hold(target, probe).await;
        let tick = pin!(Delay::from(every));
        match select(report, tick).await {
            Either::Left((r, _)) => return r.ok(),
            Either::Right((_, pending)) => report = pending,
        }
    }
}

async fn hold(target: &StreamReportTarget, probe: u64) {
    let req = HoldRequest {
        model: target.model.clone(),
        probe,
        hold_ms: target.hold_ms,
    };
    let body = serde_json::to_string(&req).ok();
    let held: Result<bool> = call_object(
        &target.env,
        &target.tenant,
        target.provider.as_str(),
        Method::Post,
        "/hold",
        body,
    )
    .await;
    if let Err(e) = held {
        fault(Fault::ProbeHoldNotRenewed {
            provider: target.provider.as_str(),
            model: target.model.as_str(),
            error: &e,
        });
    }
}

/// A report sent after the response has left (a stream's end, from `StreamReport`'s task):
/// transitions are logged and stored inline, as that task is itself under `waitUntil`.
async fn report_detached(
    env: &Env,
    tenant: &TenantId,
    provider: &ProviderName,
    req: ReportRequest,
) {
    if !req.changes_anything() {
        return;
    }
    for t in send_report(env, tenant, provider, &req).await {
        let (kind, at, body) = transition_event(tenant, provider.as_str(), &t);
        store::insert_event(env, tenant.as_str(), &kind, at, &body).await;
    }
}
