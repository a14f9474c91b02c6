//! Where every event goes: into the events list, and, when it is one a webhook may
//! subscribe to, to the tenant's alert outbox (`alert_outbox`), which delivers it off the request
//! path. A `breaker.opened` also puts the tenant on the scheduled pass's watch list.

use super::d1::{logged, Db};
use super::events::{fault, Fault};
use super::store;
use crate::config::settings::AlertEvent;
use crate::config::TenantId;
use serde::{Deserialize, Serialize};
use worker::{Env, Headers, Method, Request, RequestInit};

/// What the outbox is handed: the event as stored.
#[derive(Serialize, Deserialize)]
pub struct Enqueue {
    pub tenant: String,
    pub kind: String,
    pub body: String,
}

/// Stores the event, and hands it to the outbox when the tenant may want it. Failures are
/// logged: an event is advisory and never fails what produced it.
pub async fn publish(env: &Env, tenant: &str, kind: &str, at: u64, body: &str) {
    store::insert_event(env, tenant, kind, at, body).await;
    if kind == "breaker.opened" {
        let watched = match Db::open(env) {
            Ok(db) => db.watch(tenant).await,
            Err(e) => Err(e),
        };
        if let Err(e) = watched {
            logged(e);
        }
    }
    if AlertEvent::parse(kind).is_none() {
        return;
    }
    // This isolate's cached config says whether the tenant has alerts for it; without one the
    // outbox decides (it reads the settings when it delivers).
    let cached = TenantId::parse(tenant)
        .ok()
        .and_then(|t| store::cached_config(&t));
    if let Some(cfg) = cached {
        if !cfg.settings.alerts.as_ref().is_some_and(|a| a.wants(kind)) {
            return;
        }
    }
    if let Err(e) = enqueue(env, tenant, kind, body).await {
        fault(Fault::AlertNotQueued {
            tenant,
            event: kind,
            error: &e,
        });
    }
}

async fn enqueue(env: &Env, tenant: &str, kind: &str, body: &str) -> worker::Result<()> {
    let stub = env.durable_object("ALERTS")?.get_by_name(tenant)?;
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    let call = Enqueue {
        tenant: tenant.to_owned(),
        kind: kind.to_owned(),
        body: body.to_owned(),
    };
    let text = serde_json::to_string(&call).map_err(|e| worker::Error::RustError(e.to_string()))?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(text.into()));
    let req = Request::new_with_init("https://alerts/enqueue", &init)?;
    let resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        return Err(worker::Error::RustError(format!(
            "alert outbox answered {}",
            resp.status_code()
        )));
    }
    Ok(())
}
