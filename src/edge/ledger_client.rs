//! The client side of the tenant's ledger object: admission for requests that have a limit
//! (from this isolate's slices, else one round trip), and finished requests handed over for
//! settling and roll-ups. Every decision is `governance::isolate`'s; this file is its port.
//!
//! Records are gathered per isolate and sent about once a second, by the `waitUntil` of the
//! request whose record found the buffer empty (it sleeps on its own timer, then sends what the
//! buffer holds by then; workerd lets a `waitUntil` future await only its own timers and
//! fetches). Records of a request the ledger admitted itself (a limit nearly spent) are sent at
//! once, so its spend counts as early as possible. Records the ledger did not take are kept in
//! the isolate and go first with the next call.

use super::events::{fault, Fault};
use super::http::{now_ms, random_bytes};
use super::isolate::isolate;
use super::ledger_metrics::METRICS_HEADER;
use super::metrics::Metrics;
use super::metrics_sink;
use crate::config::SortedMap;
use crate::config::TenantId;
use crate::governance::isolate::{self, AdmissionRecord, IsolateLedger, LedgerObject, Via};
use crate::governance::lease::{RenewRequest, Renewed};
use crate::governance::{Admission, AdmitAnswer, AdmitRequest, SettleEntry};
use crate::usage::spend::Spend;
use serde::de::DeserializeOwned;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use worker::{Delay, Env, Headers, Method, Request, RequestInit, Result};

/// How long the first record of an empty buffer waits for others before they all go.
const BATCH_WINDOW_MS: u64 = 1_000;
/// A buffer this full is sent at once instead of waiting for the window.
const MAX_BATCH: usize = 256;
/// After a failed settle, one task per tenant tries again on this schedule (within the 30 s a
/// `waitUntil` may run), so kept records also reach the ledger when no further request comes.
const RETRY_AFTER_MS: [u64; 3] = [1_000, 3_000, 9_000];

fn book() -> Rc<RefCell<IsolateLedger>> {
    isolate(|i| {
        let book = i.ledger.get_or_init(|| {
            let id = random_bytes::<6>().map_or_else(|_| format!("iso{}", now_ms()), ::hex::encode);
            Rc::new(RefCell::new(IsolateLedger::new(id)))
        });
        Rc::clone(book)
    })
}

async fn call<T: DeserializeOwned>(
    env: &Env,
    tenant: &TenantId,
    path: &str,
    body: String,
) -> Result<T> {
    call_with(env, tenant, path, body, None).await
}

/// `call` with one more request header (the metrics batch riding on `/settle`).
async fn call_with<T: DeserializeOwned>(
    env: &Env,
    tenant: &TenantId,
    path: &str,
    body: String,
    extra: Option<(&str, &str)>,
) -> Result<T> {
    let stub = env.durable_object("LEDGER")?.get_by_name(tenant.as_str())?;
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    if let Some((name, value)) = extra {
        headers.set(name, value)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body.into()));
    let req = Request::new_with_init(&format!("https://ledger{path}"), &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        return Err(worker::Error::RustError(format!(
            "ledger object answered {}",
            resp.status_code()
        )));
    }
    resp.json().await
}

/// The tenant's ledger object as `governance::isolate` sees it.
struct ObjectPort<'a> {
    env: &'a Env,
    tenant: &'a TenantId,
    metrics: Option<&'a Metrics>,
}

impl LedgerObject for ObjectPort<'_> {
    async fn acquire(&self, ask: &AdmitRequest) -> std::result::Result<AdmitAnswer, String> {
        if let Some(m) = self.metrics {
            m.durable_object_call();
        }
        let body = serde_json::to_string(ask).map_err(|e| e.to_string())?;
        call(self.env, self.tenant, "/acquire", body)
            .await
            .map_err(|e| e.to_string())
    }

    async fn settle(&self, entries: &[SettleEntry]) -> std::result::Result<(), String> {
        let body = serde_json::to_string(entries).map_err(|e| e.to_string())?;
        // This isolate's metrics batch rides along; it is dropped only once the
        // ledger says it added it, and put back otherwise.
        let ride = metrics_sink::take_for_ride(self.tenant);
        let header = ride
            .as_ref()
            .map(|(_, text)| (METRICS_HEADER, text.as_str()));
        let answer = call_with::<serde_json::Value>(self.env, self.tenant, "/settle", body, header)
            .await
            .map_err(|e| e.to_string());
        if let Some((batch, _)) = ride {
            let added = answer
                .as_ref()
                .is_ok_and(|a| a["metrics"] == serde_json::Value::Bool(true));
            if !added {
                metrics_sink::put_back(self.tenant, batch);
            }
        }
        answer.map(|_| ())
    }
}

/// Decides whether the request may go upstream: from a slice, else with one round trip. With
/// the ledger unreachable, from what is left of the last slice, else refused (logged).
pub async fn admit(
    env: &Env,
    tenant: &TenantId,
    ask: AdmitRequest,
    metrics: &Metrics,
) -> AdmissionRecord {
    let port = ObjectPort {
        env,
        tenant,
        metrics: Some(metrics),
    };
    let book = book();
    let admission = isolate::admit(&port, &book, tenant.as_str(), ask, now_ms()).await;
    if admission.via == Via::Outage {
        fault(Fault::LedgerUnreachable {
            tenant: tenant.as_str(),
            admitted: admission.hold.is_some(),
        });
    }
    admission
}

/// Admits a call of a fan-out route (`AdmitRequest::call`): one round trip, never a slice.
pub async fn admit_call(
    env: &Env,
    tenant: &TenantId,
    ask: &AdmitRequest,
    metrics: &Metrics,
) -> Admission {
    let port = ObjectPort {
        env,
        tenant,
        metrics: Some(metrics),
    };
    isolate::admit_call(&port, ask).await
}

/// Renews a slice in the background (under `waitUntil`); a failure keeps the current slice.
pub async fn renew(env: &Env, tenant: &TenantId, ask: AdmitRequest) {
    let port = ObjectPort {
        env,
        tenant,
        metrics: None,
    };
    let book = book();
    if let Err(e) = isolate::renew(&port, &book, tenant.as_str(), ask, now_ms()).await {
        fault(Fault::SliceNotRenewed {
            tenant: tenant.as_str(),
            error: &e,
        });
    }
}

/// Renews a running request's hold (`governance::lease`); `Ok(false)`: the ledger no longer
/// holds it.
pub async fn renew_hold(env: &Env, tenant: &TenantId, renew: &RenewRequest) -> Result<bool> {
    let body = serde_json::to_string(renew)?;
    let answer: Renewed = call(env, tenant, "/renew", body).await?;
    Ok(answer.renewed)
}

/// The spend of each listed key (the admin key list).
pub async fn spend(
    env: &Env,
    tenant: &TenantId,
    keys: &[String],
) -> Result<SortedMap<String, Spend>> {
    let body = serde_json::to_string(&super::ledger_object::SpendRequest {
        keys: keys.to_vec(),
    })?;
    call(env, tenant, "/spend", body).await
}

/// Forgets every counter and pending roll-up of a deleted tenant, and tells the ledger which
/// generations of the id are gone so that their usage arriving later is dropped. Without D1's
/// answer the ledger still drops the generation it served.
pub async fn wipe(env: &Env, tenant: &TenantId) -> Result<()> {
    let dead_through = match super::d1::Db::open(env) {
        Ok(db) => db
            .dead_generations_through(tenant)
            .await
            .unwrap_or_else(|e| {
                fault(Fault::LedgerGenerationUnread {
                    tenant: tenant.as_str(),
                    error: &e.cause(),
                });
                None
            }),
        Err(_) => None,
    };
    let body = serde_json::to_string(&super::ledger_rollups::WipeRequest { dead_through })?;
    call::<serde_json::Value>(env, tenant, "/wipe", body)
        .await
        .map(|_| ())
}

/// Hands a finished request to its tenant's ledger; to be awaited inside a `waitUntil`.
/// `urgent`: the ledger admitted the request itself, so its record goes at once rather than
/// with the batch.
pub async fn settle(env: &Env, entry: SettleEntry, urgent: bool) {
    let tenant = entry.record.tenant.clone();
    if urgent {
        send(env, &tenant, vec![entry]).await;
        return;
    }
    let (first, full) = isolate(|i| {
        let mut b = i.settle_buffers.borrow_mut();
        let buffer = b.entry(tenant.clone()).or_default();
        buffer.push(entry);
        (buffer.len() == 1, buffer.len() >= MAX_BATCH)
    });
    if !first && !full {
        // The request that found the buffer empty sends this record with its own.
        return;
    }
    if first && !full {
        Delay::from(Duration::from_millis(BATCH_WINDOW_MS)).await;
    }
    let batch = isolate(|i| {
        i.settle_buffers
            .borrow_mut()
            .remove(&tenant)
            .unwrap_or_default()
    });
    if !batch.is_empty() {
        send(env, &tenant, batch).await;
    }
}

/// Sends the records kept from failed calls (after the ledger answered again).
pub async fn flush_kept(env: &Env, tenant: &TenantId) {
    send(env, tenant, Vec::new()).await;
}

/// Ends a tenant's retry task however it ends (done, or its `waitUntil` cancelled).
struct Retrying(TenantId);

impl Drop for Retrying {
    fn drop(&mut self) {
        isolate(|i| i.settle_retrying.borrow_mut().remove(&self.0));
    }
}

async fn send(env: &Env, tenant: &TenantId, batch: Vec<SettleEntry>) {
    if deliver(env, tenant, batch).await {
        return;
    }
    let first = isolate(|i| i.settle_retrying.borrow_mut().insert(tenant.clone()));
    if !first {
        return;
    }
    let _retrying = Retrying(tenant.clone());
    for wait in RETRY_AFTER_MS {
        Delay::from(Duration::from_millis(wait)).await;
        // Read in its own statement: no borrow of the book may live across the send.
        let kept = book().borrow().retained(tenant.as_str());
        if kept == 0 || deliver(env, tenant, Vec::new()).await {
            return;
        }
    }
}

/// Sends the kept records and `batch`; false (logged) if the ledger did not take them.
async fn deliver(env: &Env, tenant: &TenantId, batch: Vec<SettleEntry>) -> bool {
    let port = ObjectPort {
        env,
        tenant,
        metrics: None,
    };
    let book = book();
    match isolate::settle(&port, &book, tenant.as_str(), batch).await {
        Ok(()) => true,
        Err((kept, e)) => {
            fault(Fault::UsageNotSettled {
                tenant: tenant.as_str(),
                kept,
                error: &e,
            });
            false
        }
    }
}
