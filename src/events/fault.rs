//! Operational failures: one variant per thing that went wrong outside a caller's request line
//! (a lost report, a write that failed, a var that did not parse). Each is one line whose `msg`
//! names it; an error value is borrowed and written as its text. Most are errors; a few, which
//! drop or cut something as designed, are plain log lines.

use super::fields::{Fields, Tree, V};
use super::Level;
use std::fmt::{Debug, Display};

pub enum Fault<'a> {
    /// A routing object could not read a report; the isolate gets a 400.
    RoutingReportUnreadable { error: &'a str },
    /// A report's parks were cut or dropped on the way in; the rest was applied.
    RoutingReportParksAdjusted {
        model: &'a str,
        problems: &'a [String],
    },
    /// A routing object's stats fold could not be stored; memory was put back (`reload`: inexactly).
    LiveStatsNotStored {
        error: &'a dyn Display,
        reload: bool,
    },
    /// A routing object's decision could not be stored; memory was put back.
    RoutingStateNotStored {
        error: &'a dyn Display,
        reload: bool,
    },
    /// The ledger's metrics counters could not be stored; the isolate keeps its batch.
    MetricsNotStored { error: &'a dyn Display },
    /// A routing object did not answer an acquire: the candidate passes (fail open).
    RoutingObjectUnreachable {
        provider: &'a str,
        error: &'a dyn Display,
    },
    /// A routing report did not reach its object.
    RoutingReportLost {
        provider: &'a str,
        model: &'a str,
        verdict: &'a dyn Tree,
        error: &'a dyn Display,
    },
    /// Stored roll-up rows that no longer parse.
    RollupRowsUnreadable { rows: usize },
    /// Usage records of a deleted tenant generation reached the ledger (a log line).
    GenerationUsageDropped {
        tenant: Option<&'a str>,
        records: usize,
    },
    /// The ledger's storage failed during a roll-up flush.
    RollupFlushFailed { error: &'a dyn Display },
    /// D1 did not take a roll-up flush.
    RollupsNotFlushed {
        tenant: Option<&'a str>,
        flush: u64,
        rows: usize,
        error: &'a dyn Display,
    },
    /// The alert outbox could not read the tenant's generation.
    AlertGenerationUnread {
        tenant: &'a str,
        error: &'a dyn Display,
    },
    /// The alert outbox was full: its oldest delivery went.
    AlertOutboxFull { tenant: &'a str, event_id: &'a str },
    /// Deliveries queued under a deleted tenant generation were dropped.
    GenerationAlertsDropped { tenant: &'a str, deliveries: usize },
    /// An isolate's live stats did not reach the routing object.
    LiveStatsNotSent {
        provider: &'a str,
        error: &'a dyn Display,
    },
    /// A running request's hold was not renewed.
    ReservationNotRenewed {
        tenant: &'a str,
        hold: &'a str,
        error: &'a dyn Display,
    },
    /// The deployment's `[vars]` do not parse.
    InvalidDeploymentVars { error: &'a dyn Display },
    /// An alert was not handed to the outbox.
    AlertNotQueued {
        tenant: &'a str,
        event: &'a str,
        error: &'a dyn Display,
    },
    /// A D1 statement (or the binding) failed; the caller got a bare 500.
    StorageError { op: &'a str, error: &'a dyn Display },
    /// A stream cut after its first byte (a log line: the caller saw the cut).
    StreamFailed {
        request_id: &'a str,
        tenant: &'a str,
        provider: &'a str,
        model: &'a str,
        error: &'a str,
    },
    /// An isolate's metrics batch did not reach the ledger.
    MetricsNotSent {
        tenant: &'a str,
        error: &'a dyn Debug,
    },
    /// The retention `[vars]` do not parse.
    InvalidRetentionVars { error: &'a dyn Display },
    /// A scheduled probe's hold was not renewed.
    ProbeHoldNotRenewed {
        provider: &'a str,
        model: &'a str,
        error: &'a dyn Display,
    },
    /// A reservation lapsed at the ledger with no record settling it.
    ReservationReleased {
        scope: &'a dyn Tree,
        hold: &'a str,
        usd: f64,
        tokens: u64,
        requests: u64,
    },
    /// An unconfirmed Durable Object write (`what`: `live stats`, `metrics`) failed.
    WriteFailed { what: &'a str, error: &'a dyn Debug },
    /// A stored provider whose URL the deployment may not call now.
    ProviderLeftOut {
        tenant: &'a str,
        provider: &'a str,
        reason: &'a dyn Display,
    },
    /// A tenant's trace export could not be opened (`what` says why), or a batch of `spans`
    /// was dropped (`what`: how its delivery failed).
    Otel {
        tenant: &'a str,
        spans: u64,
        what: &'a str,
    },
    /// Keys of a stored provider that could not be opened.
    ProviderKeysUnusable {
        tenant: &'a str,
        provider: &'a str,
        problems: &'a [String],
    },
    /// A tenant's stored degraded mode does not parse (read as healthy).
    HealthModeUnreadable { error: &'a dyn Display },
    /// The ledger did not answer an admission: the isolate's slice decided.
    LedgerUnreachable { tenant: &'a str, admitted: bool },
    /// A slice renewal failed; the current slice stays until it lapses.
    SliceNotRenewed {
        tenant: &'a str,
        error: &'a dyn Display,
    },
    /// D1's dead generations were unread when a ledger was wiped.
    LedgerGenerationUnread {
        tenant: &'a str,
        error: &'a dyn Display,
    },
    /// Usage records the ledger did not take; the isolate keeps them.
    UsageNotSettled {
        tenant: &'a str,
        kept: usize,
        error: &'a dyn Display,
    },
    /// An object the metrics scrape could not read.
    MetricsObjectUnread {
        what: &'a str,
        tenant: &'a str,
        error: &'a dyn Display,
    },
    /// A provider's routing object unread by the scheduled pass.
    ProviderStateUnreadable {
        tenant: &'a str,
        provider: &'a str,
        error: &'a dyn Display,
    },
    /// The Analytics Engine refused a data point.
    AnalyticsNotWritten { error: &'a dyn Display },
}

fn msg(text: &'static str) -> Fields<'static> {
    Fields::new().with("msg", V::Str(text))
}

impl Fault<'_> {
    /// A plain log line for what drops or cuts by design; an error line for the rest.
    pub fn level(&self) -> Level {
        match self {
            Self::GenerationUsageDropped { .. } | Self::StreamFailed { .. } => Level::Log,
            _ => Level::Error,
        }
    }

    pub(super) fn fields(&self) -> Fields<'_> {
        use V::{Bool, Shown, Str, Strs, U64};
        match *self {
            Self::RoutingReportUnreadable { error } => {
                msg("routing report unreadable").with("error", Str(error))
            }
            Self::RoutingReportParksAdjusted { model, problems } => {
                msg("routing report parks adjusted")
                    .with("model", Str(model))
                    .with("problems", Strs(problems))
            }
            Self::LiveStatsNotStored { error, reload } => msg("live stats not stored; fold undone")
                .with("error", Shown(error))
                .with("reload", Bool(reload)),
            Self::RoutingStateNotStored { error, reload } => {
                msg("routing state not stored; decision undone")
                    .with("error", Shown(error))
                    .with("reload", Bool(reload))
            }
            Self::MetricsNotStored { error } => {
                msg("metrics not stored; batch kept by the isolate").with("error", Shown(error))
            }
            Self::RoutingObjectUnreachable { provider, error } => {
                msg("routing object unreachable, failing open")
                    .with("provider", Str(provider))
                    .with("error", Shown(error))
            }
            Self::RoutingReportLost {
                provider,
                model,
                verdict,
                error,
            } => msg("routing report lost")
                .with("provider", Str(provider))
                .with("model", Str(model))
                .with("verdict", V::Tree(verdict))
                .with("error", Shown(error)),
            Self::RollupRowsUnreadable { rows } => {
                msg("stored roll-up rows unreadable; dropped").with("rows", U64(rows as u64))
            }
            Self::GenerationUsageDropped { tenant, records } => {
                msg("usage of a deleted tenant generation dropped")
                    .with("tenant", V::OptStr(tenant))
                    .with("records", U64(records as u64))
            }
            Self::RollupFlushFailed { error } => {
                msg("usage roll-up flush failed in storage; retried").with("error", Shown(error))
            }
            Self::RollupsNotFlushed {
                tenant,
                flush,
                rows,
                error,
            } => msg("usage roll-ups not flushed; kept for a retry")
                .with("tenant", V::OptStr(tenant))
                .with("flush", U64(flush))
                .with("rows", U64(rows as u64))
                .with("error", Shown(error)),
            Self::AlertGenerationUnread { tenant, error } => {
                msg("tenant generation unread; alert queued without it")
                    .with("tenant", Str(tenant))
                    .with("error", Shown(error))
            }
            Self::AlertOutboxFull { tenant, event_id } => msg("alert outbox full, oldest dropped")
                .with("tenant", Str(tenant))
                .with("event_id", Str(event_id)),
            Self::GenerationAlertsDropped { tenant, deliveries } => {
                msg("alerts of a deleted tenant generation dropped")
                    .with("tenant", Str(tenant))
                    .with("deliveries", U64(deliveries as u64))
            }
            Self::LiveStatsNotSent { provider, error } => {
                msg("live stats not sent; kept for the next call")
                    .with("provider", Str(provider))
                    .with("error", Shown(error))
            }
            Self::ReservationNotRenewed {
                tenant,
                hold,
                error,
            } => msg("reservation not renewed; tried again")
                .with("tenant", Str(tenant))
                .with("hold", Str(hold))
                .with("error", Shown(error)),
            Self::InvalidDeploymentVars { error } => {
                msg("invalid deployment vars").with("error", Shown(error))
            }
            Self::AlertNotQueued {
                tenant,
                event,
                error,
            } => msg("alert not queued")
                .with("tenant", Str(tenant))
                .with("event", Str(event))
                .with("error", Shown(error)),
            Self::StorageError { op, error } => msg("storage error")
                .with("op", Str(op))
                .with("error", Shown(error)),
            Self::StreamFailed {
                request_id,
                tenant,
                provider,
                model,
                error,
            } => msg("stream failed after the first byte")
                .with("request_id", Str(request_id))
                .with("tenant", Str(tenant))
                .with("provider", Str(provider))
                .with("model", Str(model))
                .with("error", Str(error)),
            Self::MetricsNotSent { tenant, error } => {
                msg("metrics not sent; kept for the next call")
                    .with("tenant", Str(tenant))
                    .with("error", V::Dbg(error))
            }
            Self::InvalidRetentionVars { error } => {
                msg("invalid retention vars").with("error", Shown(error))
            }
            Self::ProbeHoldNotRenewed {
                provider,
                model,
                error,
            } => msg("probe hold not renewed")
                .with("provider", Str(provider))
                .with("model", Str(model))
                .with("error", Shown(error)),
            Self::ReservationReleased {
                scope,
                hold,
                usd,
                tokens,
                requests,
            } => msg("reservation released unsettled")
                .with("scope", V::Tree(scope))
                .with("hold", Str(hold))
                .with("usd", V::F64(usd))
                .with("tokens", U64(tokens))
                .with("requests", U64(requests)),
            Self::WriteFailed { what, error } => Fields::new()
                .with("msg", V::Joined(what, " write failed"))
                .with("error", V::Dbg(error)),
            Self::ProviderLeftOut {
                tenant,
                provider,
                reason,
            } => msg("provider left out of routing")
                .with("tenant", Str(tenant))
                .with("provider", Str(provider))
                .with("reason", Shown(reason)),
            Self::ProviderKeysUnusable {
                tenant,
                provider,
                problems,
            } => msg("provider keys unusable")
                .with("tenant", Str(tenant))
                .with("provider", Str(provider))
                .with("problems", Strs(problems)),
            Self::HealthModeUnreadable { error } => {
                msg("health_mode unreadable").with("error", Shown(error))
            }
            Self::LedgerUnreachable { tenant, admitted } => {
                msg("ledger unreachable; admitted from this isolate's slice or refused")
                    .with("tenant", Str(tenant))
                    .with("admitted", Bool(admitted))
            }
            Self::SliceNotRenewed { tenant, error } => {
                msg("slice not renewed; the current one is kept until it lapses")
                    .with("tenant", Str(tenant))
                    .with("error", Shown(error))
            }
            Self::LedgerGenerationUnread { tenant, error } => {
                msg("tenant generation unread; ledger wiped without it")
                    .with("tenant", Str(tenant))
                    .with("error", Shown(error))
            }
            Self::UsageNotSettled {
                tenant,
                kept,
                error,
            } => msg("usage records not settled; kept for the next call")
                .with("tenant", Str(tenant))
                .with("kept", U64(kept as u64))
                .with("error", Shown(error)),
            Self::MetricsObjectUnread {
                what,
                tenant,
                error,
            } => msg("metrics: object unread; left out of this scrape")
                .with("what", Str(what))
                .with("tenant", Str(tenant))
                .with("error", Shown(error)),
            Self::ProviderStateUnreadable {
                tenant,
                provider,
                error,
            } => msg("provider state unreadable")
                .with("tenant", Str(tenant))
                .with("provider", Str(provider))
                .with("error", Shown(error)),
            Self::Otel {
                tenant,
                spans,
                what,
            } => msg("otel export: spans dropped or left out")
                .with("tenant", Str(tenant))
                .with("spans", U64(spans))
                .with("what", Str(what)),
            Self::AnalyticsNotWritten { error } => {
                msg("analytics data point not written").with("error", Shown(error))
            }
        }
    }
}
