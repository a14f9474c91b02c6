//! OTLP/HTTP's JSON encoding of one export (`ExportTraceServiceRequest`), as the protocol's JSON
//! mapping says: trace and span ids as lowercase hex (not base64), enums as integers, 64-bit
//! integers as decimal strings, field names in lowerCamelCase.

use super::span::{AttrValue, Span};
use super::Resource;
use serde_json::{json, Map, Value};

fn any_value(v: &AttrValue) -> Value {
    match v {
        AttrValue::Str(s) => json!({"stringValue": s}),
        AttrValue::Int(i) => json!({"intValue": i.to_string()}),
        AttrValue::Double(d) => json!({"doubleValue": d}),
        AttrValue::Bool(b) => json!({"boolValue": b}),
        AttrValue::Strs(list) => {
            let values: Vec<Value> = list.iter().map(|s| json!({"stringValue": s})).collect();
            json!({"arrayValue": {"values": values}})
        }
    }
}

fn attributes<'a>(attrs: impl Iterator<Item = (&'a str, &'a AttrValue)>) -> Value {
    attrs
        .map(|(k, v)| json!({"key": k, "value": any_value(v)}))
        .collect()
}

fn span(s: &Span) -> Value {
    let mut o = Map::new();
    o.insert("traceId".into(), hex::encode(s.trace_id).into());
    o.insert("spanId".into(), hex::encode(s.span_id).into());
    if let Some(state) = &s.trace_state {
        o.insert("traceState".into(), state.clone().into());
    }
    if let Some(parent) = s.parent_span_id {
        o.insert("parentSpanId".into(), hex::encode(parent).into());
    }
    o.insert("name".into(), s.name.clone().into());
    o.insert("kind".into(), (s.kind as u64).into());
    o.insert("startTimeUnixNano".into(), s.start_ns.to_string().into());
    o.insert("endTimeUnixNano".into(), s.end_ns.to_string().into());
    let attrs = s.attributes.iter().map(|(k, v)| (*k, v));
    o.insert("attributes".into(), attributes(attrs));
    let mut status = Map::new();
    if let super::span::SpanStatus::Error(message) = &s.status {
        status.insert("message".into(), message.clone().into());
        status.insert("code".into(), s.status.code().into());
    }
    o.insert("status".into(), Value::Object(status));
    Value::Object(o)
}

/// One export request of `spans` under `resource`.
pub fn encode(resource: &Resource, spans: &[Span]) -> Vec<u8> {
    let resource_attrs = resource.attributes.iter().map(|(k, v)| (*k, v));
    let body = json!({
        "resourceSpans": [{
            "resource": {"attributes": attributes(resource_attrs)},
            "scopeSpans": [{
                "scope": {"name": resource.scope, "version": resource.version},
                "spans": spans.iter().map(span).collect::<Vec<_>>(),
            }],
        }],
    });
    serde_json::to_vec(&body).unwrap_or_default()
}
