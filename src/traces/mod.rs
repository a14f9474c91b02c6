//! Traces: each request of a tenant with `otel` set, as OpenTelemetry spans in the GenAI
//! semantic conventions, sent to the tenant's own OTLP/HTTP receiver. The request's place in a
//! trace (`context`), its spans (`request_trace`), their two encodings (`otlp_json`,
//! `otlp_proto`) and the isolate's batches (`export`) are decided here; the edge only POSTs a
//! batch under `waitUntil`, after the answer.

pub mod answer_facts;
pub mod context;
pub mod export;
pub mod otlp_json;
pub mod otlp_proto;
pub mod request_trace;
pub mod span;
pub mod traced;

use crate::config::otel::OtelProtocol;
use span::{AttrValue, Span};

pub use context::TraceContext;
pub use request_trace::{RequestTrace, ResponseFacts};

/// What every export says of its source: `service.name` and the instrumentation scope.
pub struct Resource {
    pub attributes: Vec<(&'static str, AttrValue)>,
    pub scope: &'static str,
    pub version: &'static str,
}

impl Resource {
    pub fn cognigate() -> Self {
        Self {
            attributes: vec![("service.name", AttrValue::Str("cognigate".to_owned()))],
            scope: "cognigate",
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// One export request's body in `protocol`.
pub fn encode(protocol: OtelProtocol, spans: &[Span]) -> Vec<u8> {
    let resource = Resource::cognigate();
    match protocol {
        OtelProtocol::HttpJson => otlp_json::encode(&resource, spans),
        OtelProtocol::HttpProtobuf => otlp_proto::encode(&resource, spans),
    }
}
