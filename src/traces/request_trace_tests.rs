use super::*;
use crate::cascade::CandidateAttempt;
use crate::routing::test_config::{add_model, cfg};
use crate::traces::span::AttrValue;
use serde_json::Value;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn tried(key: &str, at: u64, status: u16, failure: Option<Failure>) -> KeyTry {
    KeyTry {
        key_id: key.into(),
        at,
        status: Some(status),
        failure,
        error: None,
        ms: 40,
    }
}

fn attempt(provider: &str, model: &str, tries: Vec<KeyTry>) -> CandidateAttempt {
    CandidateAttempt {
        provider: provider.into(),
        model: model.into(),
        failure: tries.last().and_then(|t| t.failure),
        status: tries.last().and_then(|t| t.status),
        tries,
        retry: None,
        ends_at: None,
        truncated: None,
        refusal: false,
    }
}

fn trace(capture: Option<&str>) -> RequestTrace {
    RequestTrace {
        context: TraceContext::begin(Some(PARENT), Some("k=v"), "req_1", 1.0),
        operation: "chat",
        requested: "smart".into(),
        params: RequestParams {
            max_tokens: Some(64),
            temperature: Some(0.5),
            top_p: None,
        },
        input_messages: capture.map(str::to_owned),
        started_ms: 1_000,
    }
}

/// m1 on openai answers 503 on one key, then m2 on together serves.
fn fallback(attempts: &[CandidateAttempt]) -> Ending<'_> {
    Ending {
        attempts,
        served: Some(1),
        depth: Some(1),
        response: ResponseFacts {
            id: Some("chatcmpl-9".into()),
            model: Some("m2-upstream".into()),
            finish_reasons: vec!["stop".into()],
            output_messages: None,
        },
        billing: Some(Billing {
            input_tokens: 12,
            output_tokens: 7,
            cost_usd: Some(0.25),
            estimated: false,
        }),
        cache: Some("miss"),
        status: 200,
        outcome: "served",
        end_ms: 1_500,
    }
}

fn the_attempts() -> Vec<CandidateAttempt> {
    vec![
        attempt(
            "openai",
            "m1",
            vec![tried("k1", 1_010, 503, Some(Failure::Server))],
        ),
        attempt("together", "m2", vec![tried("k2", 1_060, 200, None)]),
    ]
}

fn config() -> TenantConfig {
    let mut c = cfg();
    add_model(&mut c, "m1", "openai", 1.0);
    add_model(&mut c, "m2", "together", 2.0);
    c
}

fn str_attr<'a>(s: &'a Span, k: &str) -> Option<&'a str> {
    match s.attr(k) {
        Some(AttrValue::Str(v)) => Some(v),
        _ => None,
    }
}

#[test]
fn a_fallback_is_one_server_span_and_one_client_span_per_upstream_call_under_the_callers_trace() {
    let attempts = the_attempts();
    let spans = trace(None).spans(&config(), &fallback(&attempts));
    assert_eq!(spans.len(), 3);
    let (req, failed, served) = (&spans[0], &spans[1], &spans[2]);
    assert_eq!(
        (req.kind, req.name.as_str()),
        (SpanKind::Server, "chat smart")
    );
    assert_eq!(
        req.parent_span_id.map(hex::encode).as_deref(),
        Some("00f067aa0ba902b7")
    );
    assert_eq!(req.trace_state.as_deref(), Some("k=v"));
    for call in [failed, served] {
        assert_eq!(call.kind, SpanKind::Client);
        assert_eq!(call.trace_id, req.trace_id);
        assert_eq!(call.parent_span_id, Some(req.span_id));
        assert_eq!(str_attr(call, "gen_ai.provider.name"), Some("openai"));
    }
    assert_eq!(failed.name, "chat m1");
    assert_eq!(str_attr(failed, "cognigate.provider"), Some("openai"));
    assert_eq!(str_attr(failed, "error.type"), Some("server"));
    assert_eq!(failed.status, SpanStatus::Error("server".into()));
    assert_eq!(str_attr(served, "cognigate.provider"), Some("together"));
    assert_eq!(served.status, SpanStatus::Unset);
    assert_eq!(str_attr(req, "cognigate.routed_from"), Some("m1"));
    assert_eq!(
        req.attr("cognigate.fallback_used"),
        Some(&AttrValue::Bool(true))
    );
    assert_eq!(
        req.attr("cognigate.fallback_depth"),
        Some(&AttrValue::Int(1))
    );
    assert_eq!(
        req.attr("cognigate.cost_usd"),
        Some(&AttrValue::Double(0.25))
    );
    assert_eq!(str_attr(req, "cognigate.cache"), Some("miss"));
    assert_eq!(
        req.attr("cognigate.estimated"),
        Some(&AttrValue::Bool(false))
    );
    assert_eq!(str_attr(served, "gen_ai.response.id"), Some("chatcmpl-9"));
    assert_eq!(
        req.attr("gen_ai.request.max_tokens"),
        Some(&AttrValue::Int(64))
    );
    assert_eq!((req.start_ns, req.end_ns), (1_000_000_000, 1_500_000_000));
    assert_eq!(
        (failed.start_ns, failed.end_ns),
        (1_010_000_000, 1_050_000_000)
    );
}

#[test]
fn token_usage_sits_on_the_serving_call_span_only() {
    let attempts = the_attempts();
    let spans = trace(None).spans(&config(), &fallback(&attempts));
    let with_usage: Vec<&str> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.usage.input_tokens").is_some())
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(with_usage, ["chat m2"]);
    assert_eq!(
        spans[2].attr("gen_ai.usage.output_tokens"),
        Some(&AttrValue::Int(7))
    );
}

#[test]
fn the_span_ids_are_the_ones_the_upstream_calls_carried_in_their_traceparent() {
    let attempts = the_attempts();
    let t = trace(None);
    let spans = t.spans(&config(), &fallback(&attempts));
    for (call, span) in spans[1..].iter().enumerate() {
        let sent = t.context.upstream_traceparent(call as u32);
        assert_eq!(&sent[36..52], hex::encode(span.span_id), "call {call}");
    }
}

#[test]
fn no_prompt_or_completion_text_unless_capture_content() {
    let attempts = the_attempts();
    let plain = trace(None).spans(&config(), &fallback(&attempts));
    assert!(plain
        .iter()
        .all(|s| s.attr("gen_ai.input.messages").is_none()
            && s.attr("gen_ai.output.messages").is_none()));
    let mut end = fallback(&attempts);
    end.response.output_messages = Some(r#"[{"role":"assistant"}]"#.into());
    let captured = trace(Some(r#"[{"role":"user"}]"#)).spans(&config(), &end);
    assert!(captured[2].attr("gen_ai.input.messages").is_some());
    assert!(captured[2].attr("gen_ai.output.messages").is_some());
    assert!(captured[0].attr("gen_ai.input.messages").is_none());
}

#[test]
fn the_json_encoding_has_hex_ids_integer_enums_and_string_int64s() {
    let attempts = the_attempts();
    let spans = trace(None).spans(&config(), &fallback(&attempts));
    let body = crate::traces::encode(crate::config::otel::OtelProtocol::HttpJson, &spans);
    let v: Value = serde_json::from_slice(&body).unwrap();
    let rs = &v["resourceSpans"][0];
    assert_eq!(rs["resource"]["attributes"][0]["key"], "service.name");
    assert_eq!(
        rs["resource"]["attributes"][0]["value"]["stringValue"],
        "cognigate"
    );
    let s = &rs["scopeSpans"][0]["spans"];
    assert_eq!(s[0]["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(s[0]["parentSpanId"], "00f067aa0ba902b7");
    assert_eq!(s[0]["kind"], 2);
    assert_eq!(s[1]["kind"], 3);
    assert_eq!(s[1]["status"]["code"], 2);
    assert_eq!(s[0]["startTimeUnixNano"], "1000000000");
    let depth = s[0]["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == "cognigate.fallback_depth")
        .unwrap();
    assert_eq!(depth["value"]["intValue"], "1");
}
