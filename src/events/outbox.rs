//! A tenant's webhook outbox: events waiting to be POSTed, the retry schedule, and the
//! signature each POST carries. Pure, time passed in; the tenant's health object stores it and
//! wakes itself with an alarm at `next_alarm`.

use serde::{Deserialize, Serialize};

/// Deliveries kept at most; past it the oldest is dropped (and said so in the events list).
pub const MAX_PENDING: usize = 500;
/// Deliveries POSTed per alarm at most; the rest wait for the next one, due at once.
pub const BATCH: usize = 20;
/// No delivery is tried later than a day after its event.
pub const GIVE_UP_AFTER_MS: u64 = 86_400_000;
const FIRST_RETRY_MS: u64 = 10_000;
/// A delivery taken for a POST is not due again for this long: the alarm that took it settles it
/// well before, and one that died mid-POST leaves it to be tried again then, not at once.
pub const IN_FLIGHT_MS: u64 = 30_000;
const MAX_RETRY_MS: u64 = 7_200_000;

/// The window a receiver is told to accept a signature's `t` in, either side of its clock.
pub const SIGNATURE_TOLERANCE_S: u64 = 300;

fn hmac_of(secret: &[u8], at_s: u64, body: &[u8]) -> Option<hmac::SimpleHmac<sha2::Sha256>> {
    use hmac::Mac;
    // `new_from_slice` accepts any key length; an HMAC key cannot be refused.
    let mut mac = <hmac::SimpleHmac<sha2::Sha256> as Mac>::new_from_slice(secret).ok()?;
    mac.update(at_s.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Some(mac)
}

/// `X-CogniGate-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed
/// with the tenant's whole `whsec_…` secret. The timestamp is signed with the body, so a receiver
/// can refuse a POST captured and replayed later; `at_s` is the time of this attempt (each retry
/// is signed afresh), so a retry hours after the event still falls inside the receiver's window,
/// and `X-CogniGate-Event-Id`, the same on every retry, is what it deduplicates on.
pub fn signature(secret: &[u8], at_s: u64, body: &[u8]) -> String {
    use hmac::Mac;
    let Some(mac) = hmac_of(secret, at_s, body) else {
        return String::new();
    };
    format!("t={at_s},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// A receiver's check, as the documentation gives it: the header's `t` within `tolerance_s` of
/// the receiver's clock, and one of its `v1` values the HMAC of `"<t>.<raw body>"` under the
/// secret, compared in constant time.
pub fn verify(secret: &[u8], header: &str, body: &[u8], now_s: u64, tolerance_s: u64) -> bool {
    use hmac::Mac;
    let mut at = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => at = v.parse::<u64>().ok(),
            Some(("v1", v)) => signatures.extend(hex::decode(v).ok()),
            _ => {}
        }
    }
    let Some(at) = at.filter(|t| t.abs_diff(now_s) <= tolerance_s) else {
        return false;
    };
    signatures
        .iter()
        .any(|sig| hmac_of(secret, at, body).is_some_and(|mac| mac.verify_slice(sig).is_ok()))
}

/// When a delivery that failed its `attempts`th try is tried again: 10 s after the first failure,
/// three times longer after each next one, at most 2 h apart; `None` once that would be more than
/// a day after the event.
pub fn retry_at(created_at: u64, attempts: u32, now: u64) -> Option<u64> {
    let exp = attempts.saturating_sub(1).min(20);
    let delay = FIRST_RETRY_MS
        .saturating_mul(3u64.saturating_pow(exp))
        .min(MAX_RETRY_MS);
    let at = now.saturating_add(delay);
    (at <= created_at.saturating_add(GIVE_UP_AFTER_MS)).then_some(at)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// `X-CogniGate-Event-Id`: the same on every retry, so a receiver can deduplicate.
    pub id: String,
    /// The event's type (`breaker.opened`, ...).
    pub kind: String,
    /// The JSON event record, POSTed as is (the bytes the signature covers).
    pub body: String,
    pub created_at: u64,
    #[serde(default)]
    pub attempts: u32,
    pub due_at: u64,
    /// The tenant generation (`usage::generation`) the event was queued under; `None` when it
    /// could not be read, or for a delivery queued before deliveries carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
}

impl Delivery {
    /// A new event, due at once: the record as listed, with its type under the name receivers
    /// expect (`type`). Its id is `evt_` and `random` in hex, or the time when no random bytes
    /// could be had.
    pub fn queued(
        kind: String,
        record: &str,
        random: Option<[u8; 12]>,
        now: u64,
        generation: Option<u64>,
    ) -> Self {
        let mut body: serde_json::Value = serde_json::from_str(record).unwrap_or_default();
        if let Some(obj) = body.as_object_mut() {
            obj.insert("type".into(), kind.clone().into());
        }
        let id = random.map_or_else(
            || format!("evt_{now}"),
            |b| format!("evt_{}", hex::encode(b)),
        );
        Self {
            id,
            kind,
            body: body.to_string(),
            created_at: now,
            attempts: 0,
            due_at: now,
            generation,
        }
    }

    /// Whether the delivery belongs to the tenant that holds its id now (of `generation`). A
    /// tenant deleted and created again under the same id takes a newer generation, so its
    /// webhook never receives what was queued for the deleted one.
    pub fn of_generation(&self, generation: u64) -> bool {
        self.generation.is_none_or(|g| g >= generation)
    }
}

/// How one POST ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// A 2xx.
    Delivered { status: u16 },
    /// Any other status (a redirect is one: redirects are not followed), or no answer.
    Failed { status: Option<u16>, error: String },
}

impl Attempt {
    /// A receiver's answer: a 2xx delivers; any other status, a redirect included, fails.
    pub fn answered(status: u16) -> Self {
        if (200..300).contains(&status) {
            return Self::Delivered { status };
        }
        Self::Failed {
            status: Some(status),
            error: format!("the webhook answered {status}"),
        }
    }

    /// No answer: the POST failed (`error`), or none came within `timeout_ms` (`None`).
    pub fn unanswered(error: Option<String>, timeout_ms: u64) -> Self {
        let error = error.unwrap_or_else(|| format!("no answer within {timeout_ms} ms"));
        Self::Failed {
            status: None,
            error,
        }
    }
}

/// What the events list shows about a delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryOutcome {
    pub event_id: String,
    pub event: String,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The next try, while it is retried; absent once delivered or given up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<u64>,
    pub delivered: bool,
}

impl DeliveryOutcome {
    /// `alert.delivered`, or `alert.failed` (with `retry_at` while it is still retried).
    pub fn kind(&self) -> &'static str {
        if self.delivered {
            "alert.delivered"
        } else {
            "alert.failed"
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outbox {
    pending: Vec<Delivery>,
}

impl Outbox {
    /// Queues a delivery due at once; the oldest dropped when the outbox is full.
    pub fn push(&mut self, d: Delivery) -> Option<Delivery> {
        self.pending.push(d);
        (self.pending.len() > MAX_PENDING).then(|| self.pending.remove(0))
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Drops every delivery of a generation older than `generation` (a deleted tenant's,
    /// superseded by the tenant created again under its id); how many were dropped.
    pub fn drop_older_generations(&mut self, generation: u64) -> usize {
        let before = self.pending.len();
        self.pending.retain(|d| d.of_generation(generation));
        before - self.pending.len()
    }

    /// The deliveries due at `now`, at most `BATCH`, oldest first; each counted as tried and held
    /// for `IN_FLIGHT_MS` until it is settled.
    pub fn take_due(&mut self, now: u64) -> Vec<Delivery> {
        let mut due = Vec::new();
        for d in self
            .pending
            .iter_mut()
            .filter(|d| d.due_at <= now)
            .take(BATCH)
        {
            d.attempts = d.attempts.saturating_add(1);
            d.due_at = now.saturating_add(IN_FLIGHT_MS);
            due.push(d.clone());
        }
        due
    }

    pub fn ids(&self) -> Vec<String> {
        self.pending.iter().map(|d| d.id.clone()).collect()
    }

    /// This outbox (as settled by an alarm that knew `known`) with what was queued meanwhile
    /// into `stored`.
    pub fn merged_with(mut self, stored: Outbox, known: &[String]) -> Outbox {
        self.pending.extend(
            stored
                .pending
                .into_iter()
                .filter(|d| !known.contains(&d.id)),
        );
        self
    }

    /// Forgets a delivery without an outcome (its event was unsubscribed since).
    pub fn forget(&mut self, id: &str) {
        self.pending.retain(|d| d.id != id);
    }

    /// Records how a POST ended: a delivered or abandoned delivery leaves the outbox, a failed
    /// one waits for its retry.
    pub fn record_attempt(
        &mut self,
        id: &str,
        attempt: Attempt,
        now: u64,
    ) -> Option<DeliveryOutcome> {
        let at = self.pending.iter().position(|d| d.id == id)?;
        let d = self.pending.get_mut(at)?;
        let mut outcome = DeliveryOutcome {
            event_id: d.id.clone(),
            event: d.kind.clone(),
            attempts: d.attempts,
            status: None,
            error: None,
            retry_at: None,
            delivered: false,
        };
        match attempt {
            Attempt::Delivered { status } => {
                outcome.status = Some(status);
                outcome.delivered = true;
                self.pending.remove(at);
            }
            Attempt::Failed { status, error } => {
                outcome.status = status;
                outcome.error = Some(error);
                match retry_at(d.created_at, d.attempts, now) {
                    Some(next) => {
                        d.due_at = next;
                        outcome.retry_at = Some(next);
                    }
                    None => {
                        self.pending.remove(at);
                    }
                }
            }
        }
        Some(outcome)
    }

    /// When the next delivery is due.
    pub fn next_alarm(&self) -> Option<u64> {
        self.pending.iter().map(|d| d.due_at).min()
    }
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
