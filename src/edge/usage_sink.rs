//! Where the request path hands over each caller request's usage record: one per request that
//! reached the cascade. Every record goes through `deliver`, the one place the ledger is fed
//! from: it is logged as one JSON line, and the tenant's ledger object settles it (spend, `tpm`)
//! and rolls it up for the usage API.

use super::events::{fault, ConsoleEvents, Event, EventSink, Fault};
use super::http::now_ms;
use super::ledger_client;
use super::request_metrics;
use crate::config::TenantId;
use crate::governance::lease::HoldLease;
use crate::governance::SettleEntry;
use crate::request::admit::Governed;
use crate::request::finish::StreamMetric;
use crate::usage::UsageRecord;
use futures::channel::oneshot;
use futures::future::{select, Either};
use std::pin::pin;
use std::time::Duration;
use worker::{Context, Delay, Env};

/// A record known when the answer is (non-streamed answers, exhausted requests).
pub fn hand_off(env: &Env, ctx: &Context, record: UsageRecord, governed: Governed) {
    let env = env.clone();
    ctx.wait_until(async move { deliver(&env, record, governed).await });
}

/// A stream's record, known only when the stream ends (ends, is cut, or the caller goes
/// away). Registered under the request's `waitUntil` when the stream starts, so it is delivered
/// even from `Drop`.
pub struct StreamHandOff {
    record: Option<oneshot::Sender<UsageRecord>>,
}

impl StreamHandOff {
    /// `metric`: the request's metric, finished with the stream's end and usage. While
    /// the stream runs, its hold is renewed (`held_until_sent`).
    pub fn start(
        env: &Env,
        ctx: &Context,
        mut governed: Governed,
        mut metric: StreamMetric,
    ) -> Self {
        let (tx, rx) = oneshot::channel::<UsageRecord>();
        let env = env.clone();
        ctx.wait_until(async move {
            let record = match governed.lease.take() {
                Some((tenant, lease)) => held_until_sent(&env, &tenant, lease, rx).await,
                None => rx.await,
            };
            // A traced stream's spans settle with it, and go after its record and metric.
            let trace = metric.trace.take();
            let ended = now_ms();
            let settled = match record {
                Ok(record) => {
                    let spans = trace.map(|t| t.settle(Some(&record), ended));
                    request_metrics::finish(metric, &env, Some(&record), ended).await;
                    deliver(&env, record, governed).await;
                    spans
                }
                Err(_) => {
                    request_metrics::finish(metric, &env, None, ended).await;
                    trace.map(|t| t.settle(None, ended))
                }
            };
            if let Some((tenant, Some(export), spans)) = settled {
                if let Some(delivery) = super::trace_export::add(&env, &tenant, &export, spans) {
                    delivery.await;
                }
            }
        });
        Self { record: Some(tx) }
    }

    /// Synchronous, so it can be called from `Drop`; a second call sends nothing.
    pub fn send(&mut self, record: UsageRecord) {
        if let Some(tx) = self.record.take() {
            let _ = tx.send(record);
        }
    }
}

/// Waits for the stream's record, renewing its hold at the ledger meanwhile (`governance::lease`):
/// the stream is counted against its limits for as long as it runs. The record is handed off
/// after any renewal in flight, so no renewal reaches the ledger after the settle it precedes.
async fn held_until_sent(
    env: &Env,
    tenant: &TenantId,
    mut lease: HoldLease,
    mut record: oneshot::Receiver<UsageRecord>,
) -> Result<UsageRecord, oneshot::Canceled> {
    while let Some(due) = lease.due_at() {
        let wait = Duration::from_millis(due.saturating_sub(now_ms()));
        let tick = pin!(Delay::from(wait));
        match select(record, tick).await {
            Either::Left((r, _)) => return r,
            Either::Right((_, pending)) => record = pending,
        }
        let sent = now_ms();
        match ledger_client::renew_hold(env, tenant, lease.request()).await {
            Ok(renewed) => lease.answered(renewed, sent),
            Err(e) => {
                fault(Fault::ReservationNotRenewed {
                    tenant: tenant.as_str(),
                    hold: &lease.request().hold,
                    error: &e,
                });
                lease.failed(now_ms());
            }
        }
    }
    record.await
}

/// Its reported tokens added to the live stats (the cost order's cached share), logged as one
/// JSON line (`"msg":"usage"`, what `e2e_usage` reads), then settled.
async fn deliver(env: &Env, record: UsageRecord, governed: Governed) {
    if let Some((provider, model, sample)) = crate::cascade::usage_sample(&record) {
        super::live_stats::record(&record.tenant, provider, model, sample);
    }
    ConsoleEvents.emit(&Event::Usage(&record));
    let entry = SettleEntry::new(record, governed.track_end_user, governed.hold);
    ledger_client::settle(env, entry, governed.urgent).await;
}
