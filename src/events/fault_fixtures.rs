//! One instance of every fault, from the inputs of `fixtures`, and its line as the call site's
//! `json!` tree wrote it.

use super::fixtures::{old, Case, Inputs, OOPS, T};
use super::{Event, Fault};
use serde_json::json;

fn fault(f: Fault<'_>) -> Event<'_> {
    Event::Fault(f)
}

pub fn cases(i: &Inputs) -> Vec<Case<'_>> {
    let e = &OOPS;
    let es = OOPS.to_string();
    vec![
        (
            "fault.routing_report_unreadable",
            fault(Fault::RoutingReportUnreadable {
                error: "expected `,` at 1:9",
            }),
            old(json!({"msg": "routing report unreadable", "error": "expected `,` at 1:9"})),
        ),
        (
            "fault.routing_report_parks_adjusted",
            fault(Fault::RoutingReportParksAdjusted {
                model: "gpt-4o",
                problems: &i.problems,
            }),
            old(
                json!({"msg": "routing report parks adjusted", "model": "gpt-4o", "problems": i.problems}),
            ),
        ),
        (
            "fault.live_stats_not_stored",
            fault(Fault::LiveStatsNotStored {
                error: e,
                reload: true,
            }),
            old(json!({"msg": "live stats not stored; fold undone", "error": es, "reload": true})),
        ),
        (
            "fault.routing_state_not_stored",
            fault(Fault::RoutingStateNotStored {
                error: e,
                reload: false,
            }),
            old(
                json!({"msg": "routing state not stored; decision undone", "error": es, "reload": false}),
            ),
        ),
        (
            "fault.metrics_not_stored",
            fault(Fault::MetricsNotStored { error: e }),
            old(json!({"msg": "metrics not stored; batch kept by the isolate", "error": es})),
        ),
        (
            "fault.routing_object_unreachable",
            fault(Fault::RoutingObjectUnreachable {
                provider: "openai",
                error: e,
            }),
            old(
                json!({"msg": "routing object unreachable, failing open", "provider": "openai", "error": es}),
            ),
        ),
        (
            "fault.routing_report_lost",
            fault(Fault::RoutingReportLost {
                provider: "openai",
                model: "gpt-4o",
                verdict: &i.verdict,
                error: e,
            }),
            old(
                json!({"msg": "routing report lost", "provider": "openai", "model": "gpt-4o", "verdict": i.verdict, "error": es}),
            ),
        ),
        (
            "fault.rollup_rows_unreadable",
            fault(Fault::RollupRowsUnreadable { rows: 2 }),
            old(json!({"msg": "stored roll-up rows unreadable; dropped", "rows": 2_usize})),
        ),
        (
            "fault.generation_usage_dropped",
            fault(Fault::GenerationUsageDropped {
                tenant: Some(T),
                records: 3,
            }),
            old(
                json!({"msg": "usage of a deleted tenant generation dropped", "tenant": Some(T.to_owned()), "records": 3_usize}),
            ),
        ),
        (
            "fault.rollup_flush_failed",
            fault(Fault::RollupFlushFailed { error: e }),
            old(json!({"msg": "usage roll-up flush failed in storage; retried", "error": es})),
        ),
        (
            "fault.rollups_not_flushed",
            fault(Fault::RollupsNotFlushed {
                tenant: None,
                flush: 12,
                rows: 40,
                error: &"d1: timeout",
            }),
            old(
                json!({"msg": "usage roll-ups not flushed; kept for a retry", "tenant": None::<String>, "flush": 12_u64, "rows": 40_usize, "error": "d1: timeout"}),
            ),
        ),
        (
            "fault.alert_generation_unread",
            fault(Fault::AlertGenerationUnread {
                tenant: T,
                error: &"D1 down",
            }),
            old(
                json!({"msg": "tenant generation unread; alert queued without it", "tenant": T, "error": "D1 down"}),
            ),
        ),
        (
            "fault.alert_outbox_full",
            fault(Fault::AlertOutboxFull {
                tenant: T,
                event_id: "evt_0a1b",
            }),
            old(
                json!({"msg": "alert outbox full, oldest dropped", "tenant": T, "event_id": "evt_0a1b"}),
            ),
        ),
        (
            "fault.generation_alerts_dropped",
            fault(Fault::GenerationAlertsDropped {
                tenant: T,
                deliveries: 5,
            }),
            old(
                json!({"msg": "alerts of a deleted tenant generation dropped", "tenant": T, "deliveries": 5_usize}),
            ),
        ),
        (
            "fault.live_stats_not_sent",
            fault(Fault::LiveStatsNotSent {
                provider: "openai",
                error: e,
            }),
            old(
                json!({"msg": "live stats not sent; kept for the next call", "provider": "openai", "error": es}),
            ),
        ),
        (
            "fault.reservation_not_renewed",
            fault(Fault::ReservationNotRenewed {
                tenant: T,
                hold: "h_1",
                error: e,
            }),
            old(
                json!({"msg": "reservation not renewed; tried again", "tenant": T, "hold": "h_1", "error": es}),
            ),
        ),
        (
            "fault.invalid_deployment_vars",
            fault(Fault::InvalidDeploymentVars {
                error: &"MAX_CHAT_BODY_BYTES: not a number",
            }),
            old(
                json!({"msg": "invalid deployment vars", "error": "MAX_CHAT_BODY_BYTES: not a number"}),
            ),
        ),
        (
            "fault.alert_not_queued",
            fault(Fault::AlertNotQueued {
                tenant: T,
                event: "breaker.opened",
                error: e,
            }),
            old(
                json!({"msg": "alert not queued", "tenant": T, "event": "breaker.opened", "error": es}),
            ),
        ),
        (
            "fault.storage_error",
            fault(Fault::StorageError {
                op: "insert_event",
                error: e,
            }),
            old(json!({"msg": "storage error", "op": "insert_event", "error": es})),
        ),
        (
            "fault.stream_failed",
            fault(Fault::StreamFailed {
                request_id: "req_9",
                tenant: T,
                provider: "openai",
                model: "gpt-4o",
                error: "read timed out",
            }),
            old(json!({
                "msg": "stream failed after the first byte", "request_id": "req_9", "tenant": T,
                "provider": "openai", "model": "gpt-4o", "error": "read timed out",
            })),
        ),
        (
            "fault.metrics_not_sent",
            fault(Fault::MetricsNotSent {
                tenant: T,
                error: &i.outcome,
            }),
            old(
                json!({"msg": "metrics not sent; kept for the next call", "tenant": T, "error": format!("{:?}", i.outcome)}),
            ),
        ),
        (
            "fault.invalid_retention_vars",
            fault(Fault::InvalidRetentionVars {
                error: &"USAGE_RETENTION_DAYS: 0",
            }),
            old(json!({"msg": "invalid retention vars", "error": "USAGE_RETENTION_DAYS: 0"})),
        ),
        (
            "fault.probe_hold_not_renewed",
            fault(Fault::ProbeHoldNotRenewed {
                provider: "openai",
                model: "gpt-4o",
                error: e,
            }),
            old(
                json!({"msg": "probe hold not renewed", "provider": "openai", "model": "gpt-4o", "error": es}),
            ),
        ),
        (
            "fault.reservation_released",
            fault(Fault::ReservationReleased {
                scope: &i.scope,
                hold: "h_1",
                usd: 0.012_5,
                tokens: 900,
                requests: 1,
            }),
            old(
                json!({"msg": "reservation released unsettled", "scope": i.scope, "hold": "h_1", "usd": 0.012_5, "tokens": 900_u64, "requests": 1_u64}),
            ),
        ),
        (
            "fault.write_failed",
            fault(Fault::WriteFailed {
                what: "live stats",
                error: e,
            }),
            old(
                json!({"msg": format!("{} write failed", "live stats"), "error": format!("{e:?}")}),
            ),
        ),
        (
            "fault.provider_left_out",
            fault(Fault::ProviderLeftOut {
                tenant: T,
                provider: "openai",
                reason: e,
            }),
            old(
                json!({"msg": "provider left out of routing", "tenant": T, "provider": "openai", "reason": es}),
            ),
        ),
        (
            "fault.provider_keys_unusable",
            fault(Fault::ProviderKeysUnusable {
                tenant: T,
                provider: "openai",
                problems: &i.problems,
            }),
            old(
                json!({"msg": "provider keys unusable", "tenant": T, "provider": "openai", "problems": i.problems}),
            ),
        ),
        (
            "fault.otel",
            fault(Fault::Otel {
                tenant: T,
                spans: 3,
                what: "receiver answered 503",
            }),
            old(
                json!({"msg": "otel export: spans dropped or left out", "tenant": T, "spans": 3, "what": "receiver answered 503"}),
            ),
        ),
        (
            "fault.health_mode_unreadable",
            fault(Fault::HealthModeUnreadable { error: e }),
            old(json!({"msg": "health_mode unreadable", "error": es})),
        ),
        (
            "fault.ledger_unreachable",
            fault(Fault::LedgerUnreachable {
                tenant: T,
                admitted: true,
            }),
            old(
                json!({"msg": "ledger unreachable; admitted from this isolate's slice or refused", "tenant": T, "admitted": true}),
            ),
        ),
        (
            "fault.slice_not_renewed",
            fault(Fault::SliceNotRenewed {
                tenant: T,
                error: &"ledger answered 503",
            }),
            old(
                json!({"msg": "slice not renewed; the current one is kept until it lapses", "tenant": T, "error": "ledger answered 503"}),
            ),
        ),
        (
            "fault.ledger_generation_unread",
            fault(Fault::LedgerGenerationUnread {
                tenant: T,
                error: &"no such table",
            }),
            old(
                json!({"msg": "tenant generation unread; ledger wiped without it", "tenant": T, "error": "no such table"}),
            ),
        ),
        (
            "fault.usage_not_settled",
            fault(Fault::UsageNotSettled {
                tenant: T,
                kept: 6,
                error: &"ledger answered 500",
            }),
            old(
                json!({"msg": "usage records not settled; kept for the next call", "tenant": T, "kept": 6_usize, "error": "ledger answered 500"}),
            ),
        ),
        (
            "fault.metrics_object_unread",
            fault(Fault::MetricsObjectUnread {
                what: "ledger",
                tenant: T,
                error: e,
            }),
            old(
                json!({"msg": "metrics: object unread; left out of this scrape", "what": "ledger", "tenant": T, "error": es}),
            ),
        ),
        (
            "fault.provider_state_unreadable",
            fault(Fault::ProviderStateUnreadable {
                tenant: T,
                provider: "openai",
                error: e,
            }),
            old(
                json!({"msg": "provider state unreadable", "tenant": T, "provider": "openai", "error": es}),
            ),
        ),
        (
            "fault.analytics_not_written",
            fault(Fault::AnalyticsNotWritten { error: e }),
            old(json!({"msg": "analytics data point not written", "error": es})),
        ),
    ]
}
