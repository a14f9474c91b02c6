//! Every event serialises to the bytes the logs and alert bodies had before `Event`: each line
//! below was written by the gateway's own `json!` trees (and `RequestLog::to_line`, the usage
//! line's struct) for the inputs in `fixtures`, and is kept here as text.

use super::fixtures::{cases, inputs};
use super::Level;

/// Each event of `fixtures::cases` as the gateway wrote it.
const LINES: &[(&str, &str)] = &[
    (
        "request",
        r#"{"msg":"request","level":"warn","request_id":"req_9","surface":"chat_completions","tenant":"acme","requested":"fast","outcome":"exhausted","status":502,"attempts":[{"provider":"openai","model":"gpt-4o","key_id":"k1","ms":12,"failure":"server","status":503,"error":"upstream \"busy\""},{"provider":"azure","model":"gpt-4o","failure":"breaker_open"}],"total_ms":40,"d1_queries":1,"durable_object_calls":3,"usage":{"prompt_tokens":10,"completion_tokens":0,"cost_usd":0.5}}"#,
    ),
    (
        "usage",
        r#"{"msg":"usage","at_ms":1700000000000,"request_id":"req_9","tenant":"acme","key_id":"key_1","end_user":"u-7","requested":"fast","served_model":"gpt-4o","provider":"openai","tokens":{"prompt":10,"completion":5,"cached":0},"cost_usd":0.000125,"usage_source":"estimated","generation":2,"outcome":"served"}"#,
    ),
    (
        "alert.budget_exceeded",
        r#"{"event":"budget.exceeded","model":"","provider":"","reason":"key key_1: daily budget of $5 spent","tenant":"acme","time":1700000000000}"#,
    ),
    (
        "alert.breaker_opened",
        r#"{"breaker_until":1700000030000,"event":"breaker.opened","model":"gpt-4o","open_ms":30000,"provider":"openai","reason":"5 failures in 60s","tenant":"acme","time":1700000000000,"transition_seq":7}"#,
    ),
    (
        "alert.breaker_closed",
        r#"{"event":"breaker.closed","model":"gpt-4o","provider":"openai","reason":"probe succeeded","tenant":"acme","time":1700000000000,"transition_seq":8}"#,
    ),
    (
        "alert.probe_succeeded",
        r#"{"event":"breaker.probe","model":"gpt-4o","provider":"openai","reason":"probe succeeded","scheduled":true,"tenant":"acme","time":1700000000000}"#,
    ),
    (
        "alert.probe_failed",
        r#"{"event":"breaker.probe","model":"gpt-4o","provider":"openai","reason":"probe failed: timeout","scheduled":true,"tenant":"acme","time":1700000000000}"#,
    ),
    (
        "alert.tenant_degraded",
        r#"{"degraded_since":1699999940000,"event":"tenant.degraded","model":"","provider":"","reason":"1 of 3 providers have a usable model","tenant":"acme","time":1700000000000}"#,
    ),
    (
        "alert.tenant_recovered",
        r#"{"degraded_since":1699999940000,"event":"tenant.recovered","model":"","provider":"","reason":"1 of 3 providers have a usable model","tenant":"acme","time":1700000000000}"#,
    ),
    (
        "alert.delivered",
        r#"{"attempts":3,"event":"alert.delivered","event_id":"evt_0a1b","model":"","provider":"","reason":"breaker.opened evt_0a1b delivered (attempt 3, status 204)","retry_at":null,"status":204,"tenant":"acme","time":1700000000000}"#,
    ),
    (
        "alert.failed_retried",
        r#"{"attempts":3,"event":"alert.failed","event_id":"evt_0a1b","model":"","provider":"","reason":"breaker.opened evt_0a1b not delivered (attempt 3): the webhook answered 500; retried at 9","retry_at":9,"status":500,"tenant":"acme","time":1700000000000}"#,
    ),
    (
        "alert.failed_given_up",
        r#"{"attempts":3,"event":"alert.failed","event_id":"evt_0a1b","model":"","provider":"","reason":"breaker.opened evt_0a1b given up after 3 attempts: no answer within 10000 ms","retry_at":null,"status":null,"tenant":"acme","time":1700000000000}"#,
    ),
    (
        "debug.cache_stored",
        r#"{"msg":"cache_stored","request_id":"req_9"}"#,
    ),
    (
        "scheduled_pass",
        r#"{"msg":"scheduled pass","tenants":4,"time":1700000000000}"#,
    ),
    (
        "fault.routing_report_unreadable",
        r#"{"error":"expected `,` at 1:9","msg":"routing report unreadable"}"#,
    ),
    (
        "fault.routing_report_parks_adjusted",
        r#"{"model":"gpt-4o","msg":"routing report parks adjusted","problems":["key k2: not sealed","key k3: \"empty\""]}"#,
    ),
    (
        "fault.live_stats_not_stored",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"live stats not stored; fold undone","reload":true}"#,
    ),
    (
        "fault.routing_state_not_stored",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"routing state not stored; decision undone","reload":false}"#,
    ),
    (
        "fault.metrics_not_stored",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"metrics not stored; batch kept by the isolate"}"#,
    ),
    (
        "fault.routing_object_unreachable",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"routing object unreachable, failing open","provider":"openai"}"#,
    ),
    (
        "fault.routing_report_lost",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","model":"gpt-4o","msg":"routing report lost","provider":"openai","verdict":{"reason":"server","verdict":"failure"}}"#,
    ),
    (
        "fault.rollup_rows_unreadable",
        r#"{"msg":"stored roll-up rows unreadable; dropped","rows":2}"#,
    ),
    (
        "fault.generation_usage_dropped",
        r#"{"msg":"usage of a deleted tenant generation dropped","records":3,"tenant":"acme"}"#,
    ),
    (
        "fault.rollup_flush_failed",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"usage roll-up flush failed in storage; retried"}"#,
    ),
    (
        "fault.rollups_not_flushed",
        r#"{"error":"d1: timeout","flush":12,"msg":"usage roll-ups not flushed; kept for a retry","rows":40,"tenant":null}"#,
    ),
    (
        "fault.alert_generation_unread",
        r#"{"error":"D1 down","msg":"tenant generation unread; alert queued without it","tenant":"acme"}"#,
    ),
    (
        "fault.alert_outbox_full",
        r#"{"event_id":"evt_0a1b","msg":"alert outbox full, oldest dropped","tenant":"acme"}"#,
    ),
    (
        "fault.generation_alerts_dropped",
        r#"{"deliveries":5,"msg":"alerts of a deleted tenant generation dropped","tenant":"acme"}"#,
    ),
    (
        "fault.live_stats_not_sent",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"live stats not sent; kept for the next call","provider":"openai"}"#,
    ),
    (
        "fault.reservation_not_renewed",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","hold":"h_1","msg":"reservation not renewed; tried again","tenant":"acme"}"#,
    ),
    (
        "fault.invalid_deployment_vars",
        r#"{"error":"MAX_CHAT_BODY_BYTES: not a number","msg":"invalid deployment vars"}"#,
    ),
    (
        "fault.alert_not_queued",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","event":"breaker.opened","msg":"alert not queued","tenant":"acme"}"#,
    ),
    (
        "fault.storage_error",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"storage error","op":"insert_event"}"#,
    ),
    (
        "fault.stream_failed",
        r#"{"error":"read timed out","model":"gpt-4o","msg":"stream failed after the first byte","provider":"openai","request_id":"req_9","tenant":"acme"}"#,
    ),
    (
        "fault.metrics_not_sent",
        r#"{"error":"Err(\"ledger answered 500\")","msg":"metrics not sent; kept for the next call","tenant":"acme"}"#,
    ),
    (
        "fault.invalid_retention_vars",
        r#"{"error":"USAGE_RETENTION_DAYS: 0","msg":"invalid retention vars"}"#,
    ),
    (
        "fault.probe_hold_not_renewed",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","model":"gpt-4o","msg":"probe hold not renewed","provider":"openai"}"#,
    ),
    (
        "fault.reservation_released",
        r#"{"hold":"h_1","msg":"reservation released unsettled","requests":1,"scope":{"id":"key_1","scope":"key"},"tokens":900,"usd":0.0125}"#,
    ),
    (
        "fault.write_failed",
        r#"{"error":"JsValue(Error: \"quota\")","msg":"live stats write failed"}"#,
    ),
    (
        "fault.provider_left_out",
        r#"{"msg":"provider left out of routing","provider":"openai","reason":"D1 said \"no\"\n\tat line 1 ü","tenant":"acme"}"#,
    ),
    (
        "fault.provider_keys_unusable",
        r#"{"msg":"provider keys unusable","problems":["key k2: not sealed","key k3: \"empty\""],"provider":"openai","tenant":"acme"}"#,
    ),
    (
        "fault.health_mode_unreadable",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"health_mode unreadable"}"#,
    ),
    (
        "fault.ledger_unreachable",
        r#"{"admitted":true,"msg":"ledger unreachable; admitted from this isolate's slice or refused","tenant":"acme"}"#,
    ),
    (
        "fault.slice_not_renewed",
        r#"{"error":"ledger answered 503","msg":"slice not renewed; the current one is kept until it lapses","tenant":"acme"}"#,
    ),
    (
        "fault.ledger_generation_unread",
        r#"{"error":"no such table","msg":"tenant generation unread; ledger wiped without it","tenant":"acme"}"#,
    ),
    (
        "fault.usage_not_settled",
        r#"{"error":"ledger answered 500","kept":6,"msg":"usage records not settled; kept for the next call","tenant":"acme"}"#,
    ),
    (
        "fault.metrics_object_unread",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"metrics: object unread; left out of this scrape","tenant":"acme","what":"ledger"}"#,
    ),
    (
        "fault.provider_state_unreadable",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"provider state unreadable","provider":"openai","tenant":"acme"}"#,
    ),
    (
        "fault.otel",
        r#"{"msg":"otel export: spans dropped or left out","spans":3,"tenant":"acme","what":"receiver answered 503"}"#,
    ),
    (
        "fault.analytics_not_written",
        r#"{"error":"D1 said \"no\"\n\tat line 1 ü","msg":"analytics data point not written"}"#,
    ),
];

#[test]
fn every_event_serialises_to_the_bytes_the_logs_had_before() {
    let i = inputs();
    let log = i.request_log();
    let cases = cases(&i, &log);
    assert_eq!(cases.len(), LINES.len(), "one pinned line per event");
    for (name, event, _) in &cases {
        let pinned = LINES.iter().find(|(n, _)| n == name).map(|(_, l)| *l);
        assert_eq!(Some(event.to_line().as_str()), pinned, "{name}");
    }
}

/// What each line was written with: `console_log!` for the request, usage, alert, debug and
/// scheduled-pass lines and for the two faults that drop or cut by design; `console_error!` for
/// every other fault.
#[test]
fn every_event_keeps_the_console_level_its_call_site_used() {
    let logged = ["fault.generation_usage_dropped", "fault.stream_failed"];
    let i = inputs();
    let log = i.request_log();
    for (name, event, _) in cases(&i, &log) {
        let expected = if name.starts_with("fault.") && !logged.contains(&name) {
            Level::Error
        } else {
            Level::Log
        };
        assert_eq!(event.level(), expected, "{name}");
    }
}

#[test]
fn every_fault_has_its_own_message() {
    let i = inputs();
    let log = i.request_log();
    let mut msgs: Vec<String> = cases(&i, &log)
        .iter()
        .filter(|(name, _, _)| name.starts_with("fault."))
        .filter_map(|(_, e, _)| {
            let v: serde_json::Value = serde_json::from_str(&e.to_line()).ok()?;
            v.get("msg")?.as_str().map(str::to_owned)
        })
        .collect();
    let faults = msgs.len();
    msgs.sort();
    msgs.dedup();
    assert_eq!(msgs.len(), faults);
    assert_eq!(faults, 36);
}
