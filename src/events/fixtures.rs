//! One instance of every event, from fixed inputs, and the same inputs written the way the
//! gateway wrote them before `Event` (a `serde_json::json!` tree, `RequestLog::to_line`, the
//! usage line's own struct): the two pins (`bytes_tests`, `json_tests`) read both.

use super::{Alert, Debug, Event};
use crate::cascade::{CandidateAttempt, Failure, KeyTry};
use crate::events::log_line::{LogUsage, RequestLog};
use crate::events::outbox::DeliveryOutcome;
use crate::governance::admission::ScopeId;
use crate::health::breaker::Transition;
use crate::health::degraded::DegradedTransition;
use crate::health::provider_state::{ModelTransition, Verdict};
use crate::usage::{Outcome, TokenCounts, UsageRecord, UsageSource};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt;

/// An error whose text needs escaping, as `Display` and `Debug` show it.
pub struct Oops;

impl fmt::Display for Oops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("D1 said \"no\"\n\tat line 1 ü")
    }
}

impl fmt::Debug for Oops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JsValue(Error: \"quota\")")
    }
}

/// Owned inputs the events borrow.
pub struct Inputs {
    pub attempts: Vec<CandidateAttempt>,
    pub record: UsageRecord,
    pub opened: ModelTransition,
    pub closed: ModelTransition,
    pub delivered: DeliveryOutcome,
    pub retried: DeliveryOutcome,
    pub given_up: DeliveryOutcome,
    pub verdict: Verdict,
    pub scope: ScopeId,
    pub problems: Vec<String>,
    pub outcome: Result<bool, String>,
}

pub fn inputs() -> Inputs {
    let attempt = |provider: &str, failure, tries| CandidateAttempt {
        provider: provider.into(),
        model: "gpt-4o".into(),
        failure,
        status: None,
        tries,
        retry: None,
        ends_at: None,
        truncated: None,
        refusal: false,
    };
    let outcome = |delivered, status, error: Option<&str>, retry_at| DeliveryOutcome {
        event_id: "evt_0a1b".into(),
        event: "breaker.opened".into(),
        attempts: 3,
        status,
        error: error.map(str::to_owned),
        retry_at,
        delivered,
    };
    let tries = vec![KeyTry {
        at: 0,
        key_id: "k1".into(),
        status: Some(503),
        failure: Some(Failure::Server),
        error: Some("upstream \"busy\"".into()),
        ms: 12,
    }];
    Inputs {
        attempts: vec![
            attempt("openai", Some(Failure::Server), tries),
            attempt("azure", Some(Failure::BreakerOpen), Vec::new()),
        ],
        record: UsageRecord {
            at_ms: 1_700_000_000_000,
            request_id: "req_9".into(),
            tenant: "acme".into(),
            key_id: "key_1".into(),
            end_user: Some("u-7".into()),
            requested: "fast".into(),
            served_model: Some("gpt-4o".into()),
            provider: Some("openai".into()),
            tokens: Some(TokenCounts::new(10, 5, 0)),
            cost_usd: Some(0.000_125),
            usage_source: UsageSource::Estimated,
            generation: 2,
            outcome: Outcome::Served,
            cache_hit: false,
            saved_usd: None,
            cache_savings_usd: None,
        },
        opened: ModelTransition {
            model: "gpt-4o".into(),
            transition_seq: 7,
            transition: Transition::Opened {
                reason: "5 failures in 60s".into(),
                breaker_until: 1_700_000_030_000,
            },
            open_ms: Some(30_000),
        },
        closed: ModelTransition {
            model: "gpt-4o".into(),
            transition_seq: 8,
            transition: Transition::Closed {
                reason: "probe succeeded".into(),
            },
            open_ms: None,
        },
        delivered: outcome(true, Some(204), None, None),
        retried: outcome(false, Some(500), Some("the webhook answered 500"), Some(9)),
        given_up: outcome(false, None, Some("no answer within 10000 ms"), None),
        verdict: Verdict::Failure {
            reason: "server".into(),
        },
        scope: ScopeId::Key("key_1".into()),
        problems: vec!["key k2: not sealed".into(), "key k3: \"empty\"".into()],
        outcome: Err("ledger answered 500".into()),
    }
}

pub const T: &str = "acme";
const NOW: u64 = 1_700_000_000_000;

impl Inputs {
    /// The request line's inputs (its events borrow them).
    pub fn request_log(&self) -> RequestLog<'_> {
        RequestLog {
            surface: "chat_completions",
            request_id: "req_9",
            tenant: T,
            requested: "fast",
            task: None,
            agent: None,
            outcome: "exhausted",
            status: 502,
            attempts: &self.attempts,
            total_ms: 40,
            d1_queries: 1,
            durable_object_calls: 3,
            usage: Some(LogUsage {
                prompt_tokens: 10,
                completion_tokens: 0,
                cost_usd: Some(0.5),
            }),
        }
    }
}

pub static OOPS: Oops = Oops;

/// A `json!` tree as the gateway logged it (`Value`'s `Display`).
pub fn old(v: Value) -> String {
    v.to_string()
}

/// The usage line as its own struct wrote it.
#[derive(Serialize)]
struct OldUsageLine<'a> {
    msg: &'static str,
    #[serde(flatten)]
    record: &'a UsageRecord,
}

/// A breaker transition's body as `json!(t)` plus the inserted fields made it.
fn old_transition(t: &ModelTransition) -> String {
    let mut event = json!(t);
    if let Some(obj) = event.as_object_mut() {
        obj.insert("tenant".into(), T.into());
        obj.insert("provider".into(), "openai".into());
        obj.insert("time".into(), NOW.into());
    }
    event.to_string()
}

/// A delivery outcome's body as `alert_outbox::record` built it.
fn old_delivery(o: &DeliveryOutcome) -> String {
    let reason = match (o.delivered, o.retry_at) {
        (true, _) => format!(
            "{} {} delivered (attempt {}, status {})",
            o.event,
            o.event_id,
            o.attempts,
            o.status.unwrap_or(0)
        ),
        (false, Some(next)) => format!(
            "{} {} not delivered (attempt {}): {}; retried at {next}",
            o.event,
            o.event_id,
            o.attempts,
            o.error.as_deref().unwrap_or("")
        ),
        (false, None) => format!(
            "{} {} given up after {} attempts: {}",
            o.event,
            o.event_id,
            o.attempts,
            o.error.as_deref().unwrap_or("")
        ),
    };
    old(json!({
        "event": o.kind(), "tenant": T, "provider": "", "model": "", "reason": reason,
        "time": NOW, "event_id": o.event_id, "attempts": o.attempts, "status": o.status,
        "retry_at": o.retry_at,
    }))
}

fn delivery(o: &DeliveryOutcome) -> Event<'_> {
    Event::Alert(Alert::Delivery {
        tenant: T,
        outcome: o,
        time: NOW,
    })
}

/// Every event: its name, the event, and the line the gateway wrote for the same inputs before.
/// A case: the event's name, the event, and its line as written before `Event`.
pub type Case<'a> = (&'static str, Event<'a>, String);

pub fn cases<'a>(i: &'a Inputs, log: &'a RequestLog<'a>) -> Vec<Case<'a>> {
    let degraded = DegradedTransition::Degraded {
        since: NOW - 60_000,
    };
    let recovered = DegradedTransition::Recovered {
        degraded_since: NOW - 60_000,
    };
    let old_degraded = |t: DegradedTransition| {
        old(json!({
            "event": t.kind(), "tenant": T, "provider": "", "model": "",
            "reason": format!("{} of {} providers have a usable model", 1, 3),
            "time": NOW, "degraded_since": t.degraded_since(),
        }))
    };
    let old_probe = |reason: &str| {
        old(json!({
            "event": "breaker.probe", "tenant": T, "provider": "openai",
            "model": "gpt-4o", "reason": reason, "time": NOW, "scheduled": true,
        }))
    };
    let probe = |failed| {
        Event::Alert(Alert::Probe {
            tenant: T,
            provider: "openai",
            model: "gpt-4o",
            failed,
            time: NOW,
        })
    };
    let tenant_alert = |transition| {
        Event::Alert(Alert::Degraded {
            tenant: T,
            transition,
            healthy: 1,
            total: 3,
            time: NOW,
        })
    };
    let breaker = |transition| {
        Event::Alert(Alert::Breaker {
            tenant: T,
            provider: "openai",
            transition,
            time: NOW,
        })
    };
    vec![
        ("request", Event::Request(log), log.to_line()),
        (
            "usage",
            Event::Usage(&i.record),
            serde_json::to_string(&OldUsageLine {
                msg: "usage",
                record: &i.record,
            })
            .unwrap_or_default(),
        ),
        (
            "alert.budget_exceeded",
            Event::Alert(Alert::BudgetExceeded {
                tenant: T,
                reason: "key key_1: daily budget of $5 spent",
                time: NOW,
            }),
            old(json!({
                "event": "budget.exceeded", "tenant": T, "provider": "", "model": "",
                "reason": "key key_1: daily budget of $5 spent", "time": NOW,
            })),
        ),
        (
            "alert.breaker_opened",
            breaker(&i.opened),
            old_transition(&i.opened),
        ),
        (
            "alert.breaker_closed",
            breaker(&i.closed),
            old_transition(&i.closed),
        ),
        (
            "alert.probe_succeeded",
            probe(None),
            old_probe("probe succeeded"),
        ),
        (
            "alert.probe_failed",
            probe(Some("timeout")),
            old_probe(&format!("probe failed: {}", "timeout")),
        ),
        (
            "alert.tenant_degraded",
            tenant_alert(degraded),
            old_degraded(degraded),
        ),
        (
            "alert.tenant_recovered",
            tenant_alert(recovered),
            old_degraded(recovered),
        ),
        (
            "alert.delivered",
            delivery(&i.delivered),
            old_delivery(&i.delivered),
        ),
        (
            "alert.failed_retried",
            delivery(&i.retried),
            old_delivery(&i.retried),
        ),
        (
            "alert.failed_given_up",
            delivery(&i.given_up),
            old_delivery(&i.given_up),
        ),
        (
            "debug.cache_stored",
            Event::Debug(Debug::CacheStored {
                request_id: "req_9",
            }),
            old(json!({"msg": "cache_stored", "request_id": "req_9"})),
        ),
        (
            "scheduled_pass",
            Event::ScheduledPass {
                time: NOW,
                tenants: 4,
            },
            old(json!({"msg": "scheduled pass", "time": NOW, "tenants": 4_usize})),
        ),
    ]
    .into_iter()
    .chain(super::fault_fixtures::cases(i))
    .collect()
}
