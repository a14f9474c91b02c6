//! The client side of the tenant's ledger object: admission for requests that have a limit (one
//! round trip), and finished requests handed over for settling and roll-ups.
//!
//! Requests of a tenant and key without limits never wait on the ledger: their records are
//! gathered per isolate and sent about once a second, by the `waitUntil` of the request whose
//! record found the buffer empty (it sleeps on its own timer, then sends what the buffer holds
//! by then; workerd lets a `waitUntil` future await only its own timers and fetches). Records of
//! a request that has a limit are sent at once, so its spend counts as early as possible.

use super::metrics::Metrics;
use crate::config::TenantId;
use crate::governance::{AdmitRequest, SettleEntry, Verdict};
use crate::usage::spend::Spend;
use serde::de::DeserializeOwned;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;
use worker::{console_error, Delay, Env, Headers, Method, Request, RequestInit, Result};

/// How long the first record of an empty buffer waits for others before they all go.
const BATCH_WINDOW_MS: u64 = 1_000;
/// A buffer this full is sent at once instead of waiting for the window.
const MAX_BATCH: usize = 256;

thread_local! {
    static BUFFERS: RefCell<BTreeMap<TenantId, Vec<SettleEntry>>> = const { RefCell::new(BTreeMap::new()) };
}

async fn call<T: DeserializeOwned>(
    env: &Env,
    tenant: &TenantId,
    path: &str,
    body: String,
) -> Result<T> {
    let stub = env.durable_object("LEDGER")?.get_by_name(tenant.as_str())?;
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
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

/// Asks the ledger whether the request may go upstream. Fails open: a ledger that cannot be
/// reached must not become a gateway outage (the failure is logged; limits resume with it).
pub async fn admit(env: &Env, tenant: &TenantId, req: &AdmitRequest, metrics: &Metrics) -> Verdict {
    metrics.durable_object_call();
    let body = match serde_json::to_string(req) {
        Ok(b) => b,
        Err(_) => return Verdict::Admit,
    };
    match call(env, tenant, "/admit", body).await {
        Ok(verdict) => verdict,
        Err(e) => {
            console_error!(
                "{}",
                serde_json::json!({"msg": "ledger unreachable; request admitted", "tenant": tenant, "error": e.to_string()})
            );
            Verdict::Admit
        }
    }
}

/// The spend of each listed key (the admin key list).
pub async fn spend(
    env: &Env,
    tenant: &TenantId,
    keys: &[String],
) -> Result<BTreeMap<String, Spend>> {
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
        Ok(db) => db.dead_generations_through(tenant).await.unwrap_or_else(|e| {
            console_error!(
                "{}",
                serde_json::json!({"msg": "tenant generation unread; ledger wiped without it", "tenant": tenant, "error": e.cause()})
            );
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
/// `urgent`: the request had a limit, so its record goes at once rather than with the batch.
pub async fn settle(env: &Env, entry: SettleEntry, urgent: bool) {
    let tenant = entry.record.tenant.clone();
    if urgent {
        send(env, &tenant, vec![entry]).await;
        return;
    }
    let (first, full) = BUFFERS.with(|b| {
        let mut b = b.borrow_mut();
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
    let batch = BUFFERS.with(|b| b.borrow_mut().remove(&tenant).unwrap_or_default());
    if !batch.is_empty() {
        send(env, &tenant, batch).await;
    }
}

async fn send(env: &Env, tenant: &TenantId, batch: Vec<SettleEntry>) {
    let count = batch.len();
    let sent = match serde_json::to_string(&batch) {
        Ok(body) => call::<serde_json::Value>(env, tenant, "/settle", body).await,
        Err(e) => Err(e.into()),
    };
    if let Err(e) = sent {
        console_error!(
            "{}",
            serde_json::json!({"msg": "usage records not settled", "tenant": tenant, "records": count, "error": e.to_string()})
        );
    }
}
