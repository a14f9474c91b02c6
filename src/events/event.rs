//! `Event`: every line the gateway logs and every alert body it stores, as one borrowed value.
//! Building one allocates nothing; `to_line` writes it, byte for byte what the gateway wrote
//! before the events had one type.

use super::alert::Alert;
use super::fault::Fault;
use super::fields::{Fields, V};
use crate::events::log_line::RequestLog;
use crate::usage::UsageRecord;
use serde::Serialize;

pub enum Event<'a> {
    /// The one log line per caller request.
    Request(&'a RequestLog<'a>),
    /// The `usage` line of a request's record, written as the record is handed to the ledger.
    Usage(&'a UsageRecord),
    /// An event of the tenant's events list (and of its webhook, when subscribed).
    Alert(Alert<'a>),
    /// An operational failure.
    Fault(Fault<'a>),
    /// A line written only with `DEBUG_COUNTERS` on, for tests to wait on.
    Debug(Debug<'a>),
    /// The cron pass's summary: when it ran and how many watched tenants it visited.
    ScheduledPass { time: u64, tenants: usize },
}

/// Where a line goes: the console's log or its error stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Log,
    Error,
}

pub enum Debug<'a> {
    /// A response-cache entry was written for this request.
    CacheStored { request_id: &'a str },
}

/// The usage line: `"msg":"usage"`, then the record's fields in their declared order.
#[derive(Serialize)]
struct UsageLine<'a> {
    msg: &'static str,
    #[serde(flatten)]
    record: &'a UsageRecord,
}

impl Event<'_> {
    pub fn level(&self) -> Level {
        match self {
            Self::Fault(f) => f.level(),
            _ => Level::Log,
        }
    }

    /// The event as written: one JSON line (an alert's stored body).
    pub fn to_line(&self) -> String {
        match self {
            Self::Request(line) => line.to_line(),
            Self::Usage(record) => json(&UsageLine {
                msg: "usage",
                record,
            }),
            Self::Alert(a) => json(a),
            Self::Fault(f) => json(&f.fields()),
            Self::Debug(Debug::CacheStored { request_id }) => json(
                &Fields::new()
                    .with("msg", V::Str("cache_stored"))
                    .with("request_id", V::Str(request_id)),
            ),
            Self::ScheduledPass { time, tenants } => json(
                &Fields::new()
                    .with("msg", V::Str("scheduled pass"))
                    .with("time", V::U64(*time))
                    .with("tenants", V::U64(*tenants as u64)),
            ),
        }
    }
}

fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
