//! Alerts: the events a tenant's events list stores and a webhook may subscribe to. Every body
//! carries `event`, `tenant`, `provider`, `model`, `reason` and `time` (`provider` and `model`
//! empty when the event is not about one), then what its kind adds.

use super::fields::{Fields, V};
use crate::events::outbox::DeliveryOutcome;
use crate::health::breaker::Transition;
use crate::health::degraded::DegradedTransition;
use crate::health::provider_state::ModelTransition;
use serde::{Serialize, Serializer};
use std::fmt;

pub enum Alert<'a> {
    /// `budget.exceeded`: a spent budget, once per scope and window in an isolate.
    BudgetExceeded {
        tenant: &'a str,
        reason: &'a str,
        time: u64,
    },
    /// `breaker.opened` / `breaker.closed`: a routing object's breaker moved.
    Breaker {
        tenant: &'a str,
        provider: &'a str,
        transition: &'a ModelTransition,
        time: u64,
    },
    /// `breaker.probe`: a scheduled probe of a half-open breaker; `failed` names the last
    /// attempt's failure (`None`: the probe was served).
    Probe {
        tenant: &'a str,
        provider: &'a str,
        model: &'a str,
        failed: Option<&'a str>,
        time: u64,
    },
    /// `tenant.degraded` / `tenant.recovered`: the scheduled pass moved the tenant's mode, having
    /// seen `healthy` of `total` providers with a usable model.
    Degraded {
        tenant: &'a str,
        transition: DegradedTransition,
        healthy: u32,
        total: u32,
        time: u64,
    },
    /// `alert.delivered` / `alert.failed`: one webhook delivery attempt's outcome.
    Delivery {
        tenant: &'a str,
        outcome: &'a DeliveryOutcome,
        time: u64,
    },
}

impl Alert<'_> {
    /// The event's kind: its `event` field, and what webhooks subscribe to.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::BudgetExceeded { .. } => "budget.exceeded",
            Self::Breaker { transition, .. } => match transition.transition {
                Transition::Opened { .. } => "breaker.opened",
                Transition::Closed { .. } => "breaker.closed",
            },
            Self::Probe { .. } => "breaker.probe",
            Self::Degraded { transition, .. } => transition.kind(),
            Self::Delivery { outcome, .. } => outcome.kind(),
        }
    }
}

/// The fields every alert has.
fn common<'a>(
    kind: &'static str,
    tenant: &'a str,
    provider: &'a str,
    model: &'a str,
) -> Fields<'a> {
    Fields::new()
        .with("event", V::Str(kind))
        .with("tenant", V::Str(tenant))
        .with("provider", V::Str(provider))
        .with("model", V::Str(model))
}

impl Serialize for Alert<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kind = self.kind();
        match *self {
            Self::BudgetExceeded {
                tenant,
                reason,
                time,
            } => common(kind, tenant, "", "")
                .with("reason", V::Str(reason))
                .with("time", V::U64(time))
                .serialize(s),
            Self::Breaker {
                tenant,
                provider,
                transition: t,
                time,
            } => {
                let (reason, until) = match &t.transition {
                    Transition::Opened {
                        reason,
                        breaker_until,
                    } => (reason, Some(*breaker_until)),
                    Transition::Closed { reason } => (reason, None),
                };
                common(kind, tenant, provider, t.model.as_str())
                    .with("reason", V::Str(reason))
                    .with("time", V::U64(time))
                    .with("transition_seq", V::U64(t.transition_seq))
                    .with_some("breaker_until", until.map(V::U64))
                    .with_some("open_ms", t.open_ms.map(V::U64))
                    .serialize(s)
            }
            Self::Probe {
                tenant,
                provider,
                model,
                failed,
                time,
            } => {
                let reason = ProbeReason(failed);
                common(kind, tenant, provider, model)
                    .with("reason", V::Shown(&reason))
                    .with("time", V::U64(time))
                    .with("scheduled", V::Bool(true))
                    .serialize(s)
            }
            Self::Degraded {
                tenant,
                transition,
                healthy,
                total,
                time,
            } => {
                let reason = Usable { healthy, total };
                common(kind, tenant, "", "")
                    .with("reason", V::Shown(&reason))
                    .with("time", V::U64(time))
                    .with("degraded_since", V::U64(transition.degraded_since()))
                    .serialize(s)
            }
            Self::Delivery {
                tenant,
                outcome: o,
                time,
            } => {
                let reason = DeliveryReason(o);
                common(kind, tenant, "", "")
                    .with("reason", V::Shown(&reason))
                    .with("time", V::U64(time))
                    .with("event_id", V::Str(&o.event_id))
                    .with("attempts", V::U64(u64::from(o.attempts)))
                    .with("status", V::OptU64(o.status.map(u64::from)))
                    .with("retry_at", V::OptU64(o.retry_at))
                    .serialize(s)
            }
        }
    }
}

struct Usable {
    healthy: u32,
    total: u32,
}

impl fmt::Display for Usable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { healthy, total } = self;
        write!(f, "{healthy} of {total} providers have a usable model")
    }
}

struct ProbeReason<'a>(Option<&'a str>);

impl fmt::Display for ProbeReason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("probe succeeded"),
            Some(failure) => write!(f, "probe failed: {failure}"),
        }
    }
}

/// The outcome in words: the listed fields, the rest in `reason`.
struct DeliveryReason<'a>(&'a DeliveryOutcome);

impl fmt::Display for DeliveryReason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = self.0;
        let (event, id, attempts) = (&o.event, &o.event_id, o.attempts);
        let error = o.error.as_deref().unwrap_or("");
        match (o.delivered, o.retry_at) {
            (true, _) => write!(
                f,
                "{event} {id} delivered (attempt {attempts}, status {})",
                o.status.unwrap_or(0)
            ),
            (false, Some(next)) => write!(
                f,
                "{event} {id} not delivered (attempt {attempts}): {error}; retried at {next}"
            ),
            (false, None) => write!(
                f,
                "{event} {id} given up after {attempts} attempts: {error}"
            ),
        }
    }
}
