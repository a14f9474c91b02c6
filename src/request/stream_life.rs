//! Relay: a served stream's life, from its first event to what it owes. The runtime pumps the
//! bytes; this decides, once, how the stream ended and what each ending owes:
//!
//! - it ends once, whichever way the upstream ends it (`[DONE]`, a failure, no chunk in
//!   time): the breaker hears how, a failed upstream is read no further, and a completed
//!   stream's copy may go to the response cache;
//! - a caller who goes away (or takes nothing for the idle window) leaves it abandoned: the
//!   upstream read is cancelled and nothing is held against the model; only a probe is released;
//! - its usage record is handed off once: the reported usage, or the estimate. When the caller
//!   went away before the usage event, a short late read may still bring the provider's own
//!   usage, and the one record waits for it.

use crate::cascade::OwedReport;
use crate::config::CatalogModel;
use crate::health::ReportRequest;
use crate::stream::StreamEnd;
use crate::usage::{PendingUsage, TokenCounts, UsageRecord, UsageSource};

/// Where a served stream is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Life {
    /// Bytes are flowing; nothing is owed yet.
    #[default]
    Relaying,
    /// The upstream ended it, and it ended.
    Ended,
    /// The caller went away before the upstream ended it.
    Abandoned,
}

/// What ending or abandoning a stream owes.
#[derive(Debug, PartialEq)]
pub struct Owed {
    /// Cancel the upstream read.
    pub abort_upstream: bool,
    /// What the routing state hears (`None`: nothing to send).
    pub report: Option<ReportRequest>,
    /// A failure after the first byte, for the log.
    pub failed: Option<String>,
    /// A completed stream's total time, for the live stats.
    pub finished_ms: Option<u64>,
    /// A completed stream's copy is stored.
    pub store_copy: bool,
}

impl Life {
    /// The upstream ended the stream at `now` (`started_ms`: when its request was sent). Owed
    /// once: a stream already ended or abandoned owes nothing more.
    pub fn end(
        &mut self,
        end: &StreamEnd,
        owed_report: OwedReport,
        (started_ms, now): (u64, u64),
    ) -> Option<Owed> {
        if *self != Self::Relaying {
            return None;
        }
        *self = Self::Ended;
        let completed = *end == StreamEnd::Completed;
        Some(Owed {
            abort_upstream: !completed,
            failed: match end {
                StreamEnd::Failed(detail) => Some(detail.clone()),
                StreamEnd::Completed => None,
            },
            finished_ms: completed.then(|| now.saturating_sub(started_ms)),
            store_copy: completed,
            report: Some(owed_report.after_stream(end)),
        })
    }

    /// The caller went away: the upstream read is cancelled, and only a probe is reported
    /// (released, proving nothing).
    pub fn abandon(&mut self, owed_report: OwedReport) -> Option<Owed> {
        if *self != Self::Relaying {
            return None;
        }
        *self = Self::Abandoned;
        Some(Owed {
            abort_upstream: true,
            report: owed_report.after_cancel(),
            failed: None,
            finished_ms: None,
            store_copy: false,
        })
    }
}

/// A stream's record as its state goes away.
#[derive(Debug, PartialEq)]
pub enum Bill {
    /// Handed off now.
    Now(UsageRecord),
    /// The caller left before the usage event: read on a little for it; this estimate goes
    /// unless the provider's own usage comes first.
    AfterLateRead(UsageRecord),
}

/// The stream's bill at `now`, from what the relay read (`usage`: its tokens and where they
/// come from, the estimate when no usage event came).
pub fn bill(
    life: Life,
    pending: &PendingUsage,
    model: &CatalogModel,
    usage: (TokenCounts, UsageSource),
    now: u64,
) -> Bill {
    let record = pending.clone().served(now, model, usage);
    match (usage.1, life) {
        (UsageSource::Estimated, Life::Relaying | Life::Abandoned) => Bill::AfterLateRead(record),
        _ => Bill::Now(record),
    }
}

/// What a late read found: the provider's usage replaces the estimate; anything else leaves the
/// estimate to go.
pub fn late_bill(
    pending: &PendingUsage,
    model: &CatalogModel,
    estimate: &UsageRecord,
    usage: (TokenCounts, UsageSource),
) -> Option<UsageRecord> {
    (usage.1 == UsageSource::Reported).then(|| pending.clone().served(estimate.at_ms, model, usage))
}
