//! "One span per caller request, kind SERVER, and one child span per upstream attempt, kind
//! CLIENT"; "token usage sits on the attempt span that served, and only there"; "a caller's W3C
//! traceparent is honoured"; "the gateway sends its attempt span's traceparent to the upstream";
//! "a failed or non-2xx batch is dropped and counted"; "a failing or hung collector costs the
//! request nothing".

use super::receiver::{
    attr, attr_str, export_to, exports, receiver, spans, traceparent, wait_for, PARENT_SPAN,
    PARENT_TRACE,
};
use crate::support::gateway::Gateway;
use crate::support::prometheus::{scrape, value};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn kind(span: &Value) -> &str {
    span["kind"].as_str().unwrap_or("")
}

fn by_kind<'a>(spans: &'a [Value], k: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| kind(s) == k).collect()
}

#[test]
fn a_fallback_request_exports_a_server_span_and_a_client_span_per_call_under_the_callers_trace() {
    let gw = Gateway::shared();
    let first = MockProvider::start("otel-first").unwrap();
    let second = MockProvider::start("otel-second").unwrap();
    let t = gw.tenant("otel-fallback");
    t.provider("one", &first.url(), &["sk-a"], "failover");
    t.provider("two", &second.url(), &["sk-c"], "failover");
    t.model("m1", "one", 1.0, 8000);
    t.model("m2", "two", 1.0, 8000);
    t.rule("chain", &["m1", "m2"]);
    first.push(Rule::any(Reply::json(
        503,
        r#"{"error":{"message":"overloaded"}}"#,
    )));
    let rx = receiver();
    export_to(&t, &rx, "http/json", json!({}));
    let body = json!({"model": "chain", "max_tokens": 32, "temperature": 0.2,
        "messages": [{"role": "user", "content": "a private prompt"}]});
    let parent = traceparent(true);
    let headers = [("traceparent", parent.as_str()), ("tracestate", "vendor=1")];
    let r = t.post_with("/v1/chat/completions", &body, &headers);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("x-cognigate-fallback-depth"), Some("1"));

    let spans = wait_for(&rx, PARENT_TRACE, 3);
    assert_eq!(spans.len(), 3, "{spans:#?}");
    let server = by_kind(&spans, "SPAN_KIND_SERVER");
    assert_eq!(server.len(), 1);
    let req = server[0];
    assert_eq!(req["name"], "chat chain");
    assert_eq!(req["parentSpanId"], PARENT_SPAN);
    assert_eq!(req["traceState"], "vendor=1");
    assert_eq!(attr_str(req, "cognigate.tenant"), Some(t.id.as_str()));
    assert_eq!(attr_str(req, "gen_ai.request.model"), Some("chain"));
    assert_eq!(
        attr(req, "gen_ai.request.max_tokens"),
        Some(&json!({"intValue": "32"}))
    );
    assert_eq!(
        attr(req, "cognigate.fallback_used"),
        Some(&json!({"boolValue": true}))
    );
    assert_eq!(
        attr(req, "cognigate.fallback_depth"),
        Some(&json!({"intValue": "1"}))
    );
    assert_eq!(attr_str(req, "cognigate.routed_from"), Some("m1"));
    assert!(attr(req, "cognigate.cost_usd").is_some());
    assert_eq!(
        attr(req, "cognigate.estimated"),
        Some(&json!({"boolValue": false}))
    );
    assert_eq!(req["resource"]["attributes"][0]["key"], "service.name");
    assert_eq!(
        req["resource"]["attributes"][0]["value"]["stringValue"],
        "cognigate"
    );

    let mut calls = by_kind(&spans, "SPAN_KIND_CLIENT");
    calls.sort_by_key(|s| s["startTimeUnixNano"].as_str().unwrap_or("").to_owned());
    assert_eq!(calls.len(), 2);
    for call in &calls {
        assert_eq!(call["parentSpanId"], req["spanId"]);
        assert_eq!(attr_str(call, "gen_ai.provider.name"), Some("openai"));
        assert_eq!(attr_str(call, "gen_ai.operation.name"), Some("chat"));
    }
    let (failed, served) = (calls[0], calls[1]);
    assert_eq!(failed["name"], "chat m1");
    assert_eq!(attr_str(failed, "cognigate.provider"), Some("one"));
    assert_eq!(attr_str(failed, "error.type"), Some("server"));
    assert_eq!(failed["status"]["code"], "STATUS_CODE_ERROR");
    assert_eq!(attr_str(served, "cognigate.provider"), Some("two"));
    assert!(attr(served, "gen_ai.response.id").is_some());
    let with_usage: Vec<&Value> = spans
        .iter()
        .filter(|s| attr(s, "gen_ai.usage.input_tokens").is_some())
        .collect();
    assert_eq!(with_usage, vec![served], "usage on the serving call only");
    assert!(attr(served, "gen_ai.usage.output_tokens").is_some());
    for s in &spans {
        assert!(
            attr(s, "gen_ai.input.messages").is_none(),
            "no content unless asked"
        );
    }

    let sent = |mock: &MockProvider| mock.calls()[0].header("traceparent").map(str::to_owned);
    let expect =
        |span: &Value| format!("00-{PARENT_TRACE}-{}-01", span["spanId"].as_str().unwrap());
    assert_eq!(
        sent(&first),
        Some(expect(failed)),
        "each call carries its own span"
    );
    assert_eq!(sent(&second), Some(expect(served)));
    assert_eq!(second.calls()[0].header("tracestate"), Some("vendor=1"));

    let export = &exports(&rx)[0];
    assert_eq!(export["content_type"], "application/json");
    assert_eq!(export["headers"]["x-otel-key"], "otel-secret-123");
}

#[test]
fn a_streamed_requests_spans_end_when_the_stream_settles_and_go_as_protobuf() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("otel-stream", &["sk-1"], "failover");
    let rx = receiver();
    export_to(&t, &rx, "http/protobuf", json!({"capture_content": true}));
    let body = json!({"model": "m", "stream": true,
        "messages": [{"role": "user", "content": "stream this"}]});
    let parent = traceparent(true);
    let r = t.post_with("/v1/chat/completions", &body, &[("traceparent", &parent)]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("[DONE]"));
    let spans = wait_for(&rx, PARENT_TRACE, 2);
    assert_eq!(spans.len(), 2, "{spans:#?}");
    assert_eq!(exports(&rx)[0]["content_type"], "application/x-protobuf");
    let req = by_kind(&spans, "SPAN_KIND_SERVER")[0];
    let call = by_kind(&spans, "SPAN_KIND_CLIENT")[0];
    let n = |s: &Value, k: &str| s[k].as_str().unwrap().parse::<u64>().unwrap();
    assert!(n(call, "endTimeUnixNano") >= n(call, "startTimeUnixNano"));
    assert_eq!(
        n(call, "endTimeUnixNano"),
        n(req, "endTimeUnixNano"),
        "the serving call lasts until the stream settled"
    );
    assert!(attr(call, "gen_ai.usage.output_tokens").is_some());
    assert!(attr(req, "gen_ai.usage.output_tokens").is_none());
    let input = attr_str(call, "gen_ai.input.messages").unwrap_or("");
    assert!(input.contains("stream this"), "capture_content: {input}");
    assert_eq!(mock.calls().len(), 1);
}

#[test]
fn an_unsampled_parent_is_not_exported_and_without_a_parent_sample_ratio_decides() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("otel-sampling", &["sk-1"], "failover");
    let rx = receiver();
    export_to(&t, &rx, "http/json", json!({"sample_ratio": 0}));
    let chat = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let unsampled = traceparent(false);
    assert_eq!(
        t.post_with(
            "/v1/chat/completions",
            &chat,
            &[("traceparent", &unsampled)]
        )
        .status,
        200
    );
    assert_eq!(
        t.post_with("/v1/chat/completions", &chat, &[]).status,
        200,
        "ratio 0"
    );
    let sampled = format!("00-{}-{PARENT_SPAN}-01", "1".repeat(32));
    assert_eq!(
        t.post_with("/v1/chat/completions", &chat, &[("traceparent", &sampled)])
            .status,
        200
    );
    let got = wait_for(&rx, &"1".repeat(32), 2);
    assert_eq!(got.len(), 2);
    let all = spans(&rx);
    assert_eq!(all.len(), 2, "only the sampled parent's trace: {all:#?}");
    let calls = mock.calls();
    assert!(calls[0]
        .header("traceparent")
        .is_some_and(|v| v.ends_with("-00")));
}

#[test]
fn the_settings_never_show_a_header_value_and_each_refusal_names_its_field() {
    let gw = Gateway::shared();
    let t = gw.tenant("otel-settings");
    let rx = receiver();
    export_to(&t, &rx, "http/json", json!({}));
    let shown = gw.admin("GET", &t.path("/settings"), None);
    assert_eq!(shown.status, 200);
    assert!(!shown.text.contains("otel-secret-123"), "{}", shown.text);
    assert_eq!(
        shown.json()["otel"]["headers"]["x-otel-key"],
        json!({"sealed": true})
    );
    for (otel, field) in [
        (
            json!({"endpoint": "https://o.example/v1/traces", "sample_ratio": 2}),
            "otel.sample_ratio",
        ),
        (
            json!({"endpoint": "https://o.example/v1/traces", "headers": {"x": {"secret": "CG_KEK"}}}),
            "otel.headers.x",
        ),
        (
            json!({"endpoint": "https://o.example/v1/traces", "protocol": "grpc"}),
            "otel",
        ),
    ] {
        let r = t.put("/settings", json!({"otel": otel}));
        assert_eq!(r.status, 400, "{otel}: {}", r.text);
        let param = r.json()["error"]["param"].as_str().unwrap_or("").to_owned();
        assert!(param.starts_with(field), "{otel}: {param}");
    }
    let still = gw.admin("GET", &t.path("/settings"), None);
    assert_eq!(
        still.json()["otel"],
        shown.json()["otel"],
        "a refused write changes nothing"
    );
}

#[test]
fn a_refusing_receiver_costs_the_request_nothing_and_its_dropped_spans_are_counted() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("otel-refused", &["sk-1"], "failover");
    let rx = receiver();
    rx.script(json!({"status": 503}));
    export_to(&t, &rx, "http/json", json!({}));
    let r = t.chat("m");
    assert_eq!(r.status, 200, "{}", r.text);
    let labels = [("tenant", t.id.as_str())];
    let dropped = eventually("dropped spans counted", || {
        let (_, parsed) = scrape(gw);
        let dropped = value(&parsed, "cognigate_otel_dropped_spans_total", &labels);
        (dropped >= 2.0).then_some(dropped)
    });
    assert_eq!(dropped, 2.0, "the request span and its call's");
    assert_eq!(exports(&rx).len(), 1, "a non-2xx is not retried");
}

#[test]
fn a_hung_receiver_is_not_waited_on_by_the_request() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("otel-hung", &["sk-1"], "failover");
    let rx = receiver();
    rx.script(json!({"hang_ms": 3000}));
    export_to(&t, &rx, "http/json", json!({}));
    let r = t.chat("m");
    let answered_ms = now_ms();
    assert_eq!(r.status, 200, "{}", r.text);
    let export = eventually("the export answered", || {
        let got = exports(&rx);
        got.into_iter().find(|e| e.get("answered_ms").is_some())
    });
    let held_until = export["answered_ms"].as_u64().unwrap();
    assert!(
        answered_ms < held_until,
        "the caller had its answer ({answered_ms}) while the receiver held the export (to {held_until})"
    );
}

/// `check`'s first answer within 20 s (what goes after the answer takes its time).
fn eventually<T>(what: &str, check: impl Fn() -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < until, "never: {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn now_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| d.as_millis() as u64)
}
