//! `GET /admin/v1/metrics`: the Prometheus text of every tenant. One D1 query lists
//! the tenants and their providers; then, all at once, each tenant's ledger object answers its
//! counters and each tenant/provider routing object its breakers and parked keys. Nothing is read
//! from this isolate's memory: the objects hold every isolate's counts. An object that cannot be
//! reached is left out of this scrape (logged), the rest is answered.

use super::d1::{logged, Db};
use super::events::{fault, Fault};
use super::http::{self, HttpReply};
use super::metrics_sink;
use super::routing_object::call_object;
use crate::config::TenantId;
use crate::metrics::prometheus::{render, ProviderGauges, Scrape, CONTENT_TYPE};
use crate::routing::stats::stats_book::Gauges;
use futures::future::join_all;
use worker::{Env, Method, Request};

fn unread(what: &str, tenant: &TenantId, e: &worker::Error) {
    fault(Fault::MetricsObjectUnread {
        what,
        tenant: tenant.as_str(),
        error: e,
    });
}

pub async fn metrics(req: Request, env: &Env) -> HttpReply {
    super::admin::authorize(&req, env)?;
    let db = Db::open(env).map_err(logged)?;
    let listing = db.tenants_with_providers().await.map_err(logged)?;
    let mut tenants: Vec<&TenantId> = listing.iter().map(|(t, _)| t).collect();
    tenants.dedup();
    let counts = join_all(tenants.into_iter().map(|t| async move {
        match metrics_sink::read(env, t).await {
            Ok(c) => Some((t.to_string(), c)),
            Err(e) => {
                unread("ledger", t, &e);
                None
            }
        }
    }));
    let gauges = join_all(
        listing
            .iter()
            .filter_map(|(t, p)| Some((t, p.as_deref()?)))
            .map(|(t, p)| async move {
                let read: worker::Result<Gauges> =
                    call_object(env, t, p, Method::Get, "/gauges", None).await;
                match read {
                    Ok(g) => Some(ProviderGauges {
                        tenant: t.to_string(),
                        provider: p.to_owned(),
                        breakers: g.breakers,
                        parked_keys: g.parked,
                    }),
                    Err(e) => {
                        unread("routing", t, &e);
                        None
                    }
                }
            }),
    );
    let (counts, gauges) = futures::join!(counts, gauges);
    let scrape = Scrape {
        counts: counts.into_iter().flatten().collect(),
        gauges: gauges.into_iter().flatten().collect(),
    };
    http::bytes(200, CONTENT_TYPE, render(&scrape).into_bytes())
}
