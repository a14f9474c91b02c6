//! The Durable Object holding one tenant's webhook outbox: events wait here and are
//! POSTed from its alarm, off every request path, retried with backoff for at most a day
//! (`events::outbox`). Each outcome is an event (`alert.delivered`, `alert.failed`). Each delivery
//! carries the tenant generation it was queued under: one of a deleted tenant is dropped, never
//! POSTed to the webhook of a tenant created again under the same id.

use super::alerts::Enqueue;
use super::d1::{parse_stored, Db};
use super::events::{fault, Alert, Event, Fault};
use super::http::{json_body, now_ms, random_bytes};
use super::js_fetch::{self, Posted};
use crate::config::{SettingsOverrides, TenantId};
use crate::events::outbox::{signature, Attempt, Delivery, DeliveryOutcome, Outbox};
use worker::{durable_object, DurableObject, Env, Method, Request, Response, Result, State};

const OUTBOX_KEY: &str = "outbox";
const TENANT_KEY: &str = "tenant";
/// How long a receiver has to answer one POST.
const POST_TIMEOUT_MS: u64 = 10_000;

#[durable_object]
pub struct AlertOutbox {
    state: State,
    env: Env,
}

impl DurableObject for AlertOutbox {
    fn new(state: State, env: Env) -> Self {
        Self { state, env }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        match (req.method(), req.path().as_str()) {
            (Method::Post, "/enqueue") => {
                let call: Enqueue = json_body(&mut req).await?;
                let now = now_ms();
                let generation = match self.generation(&call.tenant).await {
                    Ok(Some(g)) => Some(g),
                    // No tenant holds the id: a deleted tenant's event, with nowhere to go.
                    Ok(None) => return Response::from_json(&serde_json::json!({})),
                    Err(e) => {
                        fault(Fault::AlertGenerationUnread {
                            tenant: &call.tenant,
                            error: &e,
                        });
                        None
                    }
                };
                let mut outbox = self.load().await?;
                if let Some(g) = generation {
                    dropped_older(&call.tenant, outbox.drop_older_generations(g));
                }
                let random = random_bytes::<12>().ok();
                let queued = Delivery::queued(call.kind, &call.body, random, now, generation);
                let dropped = outbox.push(queued);
                if let Some(d) = dropped {
                    fault(Fault::AlertOutboxFull {
                        tenant: &call.tenant,
                        event_id: &d.id,
                    });
                }
                self.state.storage().put(TENANT_KEY, &call.tenant).await?;
                self.store(&outbox).await?;
                Response::from_json(&serde_json::json!({}))
            }
            _ => Response::error("no such alert-outbox route", 404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        let now = now_ms();
        let mut outbox = self.load().await?;
        let due = outbox.take_due(now);
        let known = outbox.ids();
        // Stored before the POSTs: the attempts are counted and the alarm moved past them.
        self.store(&outbox).await?;
        if due.is_empty() {
            return Response::ok("nothing due");
        }
        let tenant: Option<String> = self.state.storage().get(TENANT_KEY).await?;
        let tenant = tenant.unwrap_or_default();
        let target = self.target(&tenant).await;
        let mut outcomes = Vec::new();
        for d in due {
            let attempt = match &target {
                Err(why) => Attempt::Failed {
                    status: None,
                    error: why.clone(),
                },
                Ok(Some(t)) if !d.of_generation(t.generation) => {
                    dropped_older(&tenant, 1);
                    outbox.forget(&d.id);
                    continue;
                }
                Ok(Some(t)) if t.events.contains(&d.kind) => post(&t.url, &t.secret, &d).await,
                // No tenant, no alerts, or the event unsubscribed since.
                Ok(_) => {
                    outbox.forget(&d.id);
                    continue;
                }
            };
            outcomes.extend(outbox.record_attempt(&d.id, attempt, now_ms()));
        }
        // An enqueue may have landed during the POSTs: kept beside what was settled.
        let stored = self.load().await?;
        self.store(&outbox.merged_with(stored, &known)).await?;
        for o in outcomes {
            record(&self.env, &tenant, &o).await;
        }
        Response::ok("delivered")
    }
}

impl AlertOutbox {
    async fn load(&self) -> Result<Outbox> {
        Ok(self
            .state
            .storage()
            .get::<Outbox>(OUTBOX_KEY)
            .await?
            .unwrap_or_default())
    }

    /// Stores the outbox and sets the alarm for its next due delivery.
    async fn store(&self, outbox: &Outbox) -> Result<()> {
        self.state.storage().put(OUTBOX_KEY, outbox).await?;
        match outbox.next_alarm() {
            Some(at) => {
                let offset = at.saturating_sub(now_ms());
                self.state
                    .storage()
                    .set_alarm(i64::try_from(offset).unwrap_or(i64::MAX))
                    .await
            }
            None => self.state.storage().delete_alarm().await,
        }
    }

    async fn generation(&self, tenant: &str) -> std::result::Result<Option<u64>, String> {
        let db = Db::open(&self.env).map_err(|e| format!("{e:?}"))?;
        db.tenant_generation(tenant)
            .await
            .map_err(|e| format!("{e:?}"))
    }

    /// Where deliveries go, read now: a URL changed or alerts removed since the event take
    /// effect at once. `None`: nothing to deliver (no tenant holds the id, or it has no alerts),
    /// so its deliveries are dropped like unsubscribed ones. A URL the deployment may not reach
    /// (stored before the rule, or the switch turned off since) is a failed attempt.
    async fn target(&self, tenant: &str) -> std::result::Result<Option<Target>, String> {
        let db = Db::open(&self.env).map_err(|e| format!("{e:?}"))?;
        let Some(row) = db
            .alert_target(tenant)
            .await
            .map_err(|e| format!("{e:?}"))?
        else {
            return Ok(None);
        };
        let generation = row.generation();
        let settings: SettingsOverrides =
            parse_stored(&row.settings).map_err(|e| format!("{e:?}"))?;
        let Some(alerts) = settings.alerts else {
            return Ok(None);
        };
        alerts
            .webhook_url
            .check_reach(super::deployment::allow_http_upstreams(&self.env))
            .map_err(|e| e.to_string())?;
        let t = TenantId::parse(tenant).map_err(|e| format!("{e:?}"))?;
        let kek = super::store::kek(&self.env)
            .map_err(|_| "CG_KEK is malformed".to_owned())?
            .ok_or("no CG_KEK to open the signing secret")?;
        let sealed = row.alert_secret.ok_or("no signing secret stored")?;
        let secret = kek
            .open_alert_secret(&t, &sealed)
            .map_err(|e| format!("{e:?}"))?;
        let events = alerts
            .events
            .iter()
            .map(|e| e.as_str().to_owned())
            .collect();
        Ok(Some(Target {
            url: alerts.webhook_url.as_str().to_owned(),
            secret,
            events,
            generation,
        }))
    }
}

/// The tenant's webhook as the alarm read it.
struct Target {
    url: String,
    /// The signing secret in the clear.
    secret: String,
    events: Vec<String>,
    /// The generation of the tenant holding the id now.
    generation: u64,
}

fn dropped_older(tenant: &str, n: usize) {
    if n > 0 {
        fault(Fault::GenerationAlertsDropped {
            tenant,
            deliveries: n,
        });
    }
}

/// One signed POST; a redirect is an answer like any other (not followed).
async fn post(url: &str, secret: &str, d: &Delivery) -> Attempt {
    // Signed now: each attempt carries its own time (`events::outbox::signature`).
    let signed = signature(secret.as_bytes(), now_ms() / 1_000, d.body.as_bytes());
    let headers = [
        ("content-type", "application/json"),
        ("x-cognigate-signature", signed.as_str()),
        ("x-cognigate-event-id", d.id.as_str()),
        ("x-cognigate-event", d.kind.as_str()),
    ];
    match js_fetch::post(url, &headers, d.body.as_bytes(), POST_TIMEOUT_MS, None).await {
        Posted::Answered { status, .. } => Attempt::answered(status),
        Posted::Failed(error) => Attempt::unanswered(Some(error), POST_TIMEOUT_MS),
        Posted::TimedOut => Attempt::unanswered(None, POST_TIMEOUT_MS),
    }
}

/// The outcome as an event of the events list (the listed fields, the rest in `reason`).
async fn record(env: &Env, tenant: &str, o: &DeliveryOutcome) {
    let time = now_ms();
    let alert = Alert::Delivery {
        tenant,
        outcome: o,
        time,
    };
    let body = Event::Alert(alert).to_line();
    super::store::insert_event(env, tenant, o.kind(), time, &body).await;
}
