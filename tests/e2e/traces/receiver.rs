//! The receiver's side of the tests: a tenant whose `otel` points at it, and its exports read
//! back as decoded spans.

use crate::support::gateway::Tenant;
use crate::support::python_mock::PythonMock;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

pub const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
pub const PARENT_SPAN: &str = "00f067aa0ba902b7";

pub fn traceparent(sampled: bool) -> String {
    let flags = if sampled { "01" } else { "00" };
    format!("00-{PARENT_TRACE}-{PARENT_SPAN}-{flags}")
}

pub fn receiver() -> PythonMock {
    PythonMock::start("otlp_receiver.py", &json!({}))
}

/// `otel` on the tenant, pointed at `receiver` with one literal header.
pub fn export_to(t: &Tenant<'_>, receiver: &PythonMock, protocol: &str, extra: Value) {
    let mut otel = json!({
        "endpoint": format!("{}/v1/traces", receiver.url()),
        "protocol": protocol,
        "headers": {"x-otel-key": "otel-secret-123"},
    });
    if let (Some(o), Some(e)) = (otel.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    t.put_ok("/settings", json!({"otel": otel}));
}

/// Every export received so far (each decoded, or its decode error).
pub fn exports(receiver: &PythonMock) -> Vec<Value> {
    receiver.calls()
}

/// Every span received so far.
pub fn spans(receiver: &PythonMock) -> Vec<Value> {
    let exports = exports(receiver);
    for e in &exports {
        assert!(e.get("error").is_none(), "an export failed to decode: {e}");
    }
    exports
        .iter()
        .flat_map(|e| e["spans"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// The spans of trace `trace`, once `n` of them arrived (within 10 s: they go after the answer).
pub fn wait_for(receiver: &PythonMock, trace: &str, n: usize) -> Vec<Value> {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let of_trace: Vec<Value> = spans(receiver)
            .into_iter()
            .filter(|s| s["traceId"] == trace)
            .collect();
        if of_trace.len() >= n || Instant::now() > until {
            return of_trace;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A span's attribute value, as the receiver decoded it (`{"stringValue": …}` and the like).
pub fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

pub fn attr_str<'a>(span: &'a Value, key: &str) -> Option<&'a str> {
    attr(span, key)?.get("stringValue")?.as_str()
}
