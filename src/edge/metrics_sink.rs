//! This isolate's Prometheus counters, per tenant, until its ledger object has them.
//! A request's facts are added here when it ends (`observe`); the batch rides to the ledger on
//! the `/settle` call that carries usage records anyway (`ledger_client`, header
//! `ledger_metrics::METRICS_HEADER`), and when none carries it, the first request of a quiet
//! spell sends it with one `POST /metrics` under `waitUntil` after `FLUSH_AFTER_MS`. So counts
//! reach the scrape within about `FLUSH_AFTER_MS` plus the usage batch window, well inside 10 s,
//! and a request adds no Durable Object call of its own.
//!
//! A batch leaves `PENDING` when taken for a call and is dropped when the ledger answers that it
//! added it; a failed call puts it back (counts only add up, so order does not matter).

use super::analytics;
use super::events::{fault, Fault};
use super::isolate::isolate;
use crate::config::TenantId;
use crate::metrics::counts::{MetricCounts, RequestMetric};
use crate::usage::TokenCounts;
use std::future::Future;
use std::time::Duration;
use worker::{Delay, Env, Headers, Method, Request, RequestInit};

/// A batch no `/settle` carried goes on its own this long after the request that found no flush
/// waiting (then again after `RETRY_AFTER_MS` while the ledger cannot be reached).
pub const FLUSH_AFTER_MS: u64 = 3_000;
const RETRY_AFTER_MS: [u64; 2] = [2_000, 4_000];
/// A batch rides in a `/settle` header only when its JSON is ASCII and at most this long; a
/// larger one waits for the timed flush.
const MAX_RIDE_BYTES: usize = 8 * 1024;

/// What the Analytics Engine data point adds to the counters' facts.
pub struct Extra<'a> {
    pub provider: &'a str,
    pub tokens: Option<TokenCounts>,
}

/// Adds one ended request (and writes its Analytics Engine data point when the binding is
/// configured). Answers the timed flush to run under `waitUntil` when the tenant has none
/// waiting.
pub fn observe(
    env: &Env,
    tenant: &TenantId,
    metric: &RequestMetric,
    extra: Extra<'_>,
) -> Option<impl Future<Output = ()> + 'static> {
    analytics::write(env, tenant, metric, &extra);
    isolate(|i| {
        i.metrics_pending
            .borrow_mut()
            .entry(tenant.clone())
            .or_default()
            .observe(metric)
    });
    timed(env, tenant)
}

/// Adds spans the tenant's trace export dropped; answers the timed flush as `observe` does.
pub fn add_dropped_spans(
    env: &Env,
    tenant: &TenantId,
    spans: u64,
) -> Option<impl Future<Output = ()> + 'static> {
    isolate(|i| {
        let mut pending = i.metrics_pending.borrow_mut();
        pending
            .entry(tenant.clone())
            .or_default()
            .dropped_spans(spans)
    });
    timed(env, tenant)
}

/// The tenant's timed flush, when none waits.
fn timed(env: &Env, tenant: &TenantId) -> Option<impl Future<Output = ()> + 'static> {
    let first = isolate(|i| i.metrics_timed.borrow_mut().insert(tenant.clone()));
    let (env, tenant) = (env.clone(), tenant.clone());
    first.then(|| flush_later(env, tenant))
}

fn take(tenant: &TenantId) -> Option<MetricCounts> {
    let taken = isolate(|i| i.metrics_pending.borrow_mut().remove(tenant));
    taken.filter(|c| !c.is_empty())
}

/// A batch the ledger did not take goes back, added to what came meanwhile.
pub fn put_back(tenant: &TenantId, batch: MetricCounts) {
    isolate(|i| {
        i.metrics_pending
            .borrow_mut()
            .entry(tenant.clone())
            .or_default()
            .merge(&batch)
    });
}

/// The pending batch as a `/settle` header value, if it may ride there.
pub fn take_for_ride(tenant: &TenantId) -> Option<(MetricCounts, String)> {
    let batch = take(tenant)?;
    match serde_json::to_string(&batch) {
        Ok(text) if text.is_ascii() && text.len() <= MAX_RIDE_BYTES => Some((batch, text)),
        _ => {
            put_back(tenant, batch);
            None
        }
    }
}

/// Frees the tenant's timer slot however the wait ends (its `waitUntil` may be cancelled), so a
/// later request can start another.
struct Waiting(Option<TenantId>);

impl Waiting {
    fn end(&mut self) {
        if let Some(t) = self.0.take() {
            isolate(|i| i.metrics_timed.borrow_mut().remove(&t));
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.end();
    }
}

async fn flush_later(env: Env, tenant: TenantId) {
    let mut waiting = Waiting(Some(tenant.clone()));
    Delay::from(Duration::from_millis(FLUSH_AFTER_MS)).await;
    // From here a new request starts a new timer, so none waits on this one's call.
    waiting.end();
    for wait in std::iter::once(0).chain(RETRY_AFTER_MS) {
        if wait > 0 {
            Delay::from(Duration::from_millis(wait)).await;
        }
        let Some(batch) = take(&tenant) else {
            return;
        };
        match send(&env, &tenant, &batch).await {
            Ok(true) => return,
            outcome => {
                fault(Fault::MetricsNotSent {
                    tenant: tenant.as_str(),
                    error: &outcome,
                });
                put_back(&tenant, batch);
            }
        }
    }
}

/// One `POST /metrics` to the tenant's ledger: whether it added the batch.
async fn send(env: &Env, tenant: &TenantId, batch: &MetricCounts) -> worker::Result<bool> {
    let stub = env.durable_object("LEDGER")?.get_by_name(tenant.as_str())?;
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(serde_json::to_string(batch)?.into()));
    let req = Request::new_with_init("https://ledger/metrics", &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        return Ok(false);
    }
    let answer: serde_json::Value = resp.json().await?;
    Ok(answer["metrics"] == serde_json::Value::Bool(true))
}

/// Reads one tenant's counters from its ledger (the scrape).
pub async fn read(env: &Env, tenant: &TenantId) -> worker::Result<MetricCounts> {
    let stub = env.durable_object("LEDGER")?.get_by_name(tenant.as_str())?;
    let mut resp = stub.fetch_with_str("https://ledger/metrics").await?;
    if resp.status_code() != 200 {
        return Err(worker::Error::RustError(format!(
            "ledger answered {}",
            resp.status_code()
        )));
    }
    resp.json().await
}
