//! OTLP/HTTP's protobuf encoding of one export, written by hand for this one message set
//! (`ExportTraceServiceRequest` → `ResourceSpans` → `ScopeSpans` → `Span`, `KeyValue`,
//! `AnyValue`, `Status`): a protobuf crate would cost the module more than these lines. Field
//! numbers are those of `opentelemetry/proto/trace/v1/trace.proto` and `common/v1/common.proto`.

use super::span::{AttrValue, Span, SpanStatus};
use super::Resource;

/// Protobuf wire types.
const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LEN: u64 = 2;

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn tag(&mut self, field: u64, wire: u64) {
        self.varint((field << 3) | wire);
    }

    fn bytes(&mut self, field: u64, b: &[u8]) {
        self.tag(field, LEN);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn string(&mut self, field: u64, s: &str) {
        self.bytes(field, s.as_bytes());
    }

    fn uint(&mut self, field: u64, v: u64) {
        self.tag(field, VARINT);
        self.varint(v);
    }

    fn fixed64(&mut self, field: u64, v: u64) {
        self.tag(field, FIXED64);
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn message(&mut self, field: u64, write: impl FnOnce(&mut Writer)) {
        let mut inner = Writer::default();
        write(&mut inner);
        self.bytes(field, &inner.0);
    }
}

/// `AnyValue`: string 1, bool 2, int 3, double 4, array 5 (`ArrayValue.values` 1).
fn any_value(w: &mut Writer, v: &AttrValue) {
    match v {
        AttrValue::Str(s) => w.string(1, s),
        AttrValue::Bool(b) => w.uint(2, u64::from(*b)),
        AttrValue::Int(i) => w.uint(3, *i as u64),
        AttrValue::Double(d) => w.fixed64(4, d.to_bits()),
        AttrValue::Strs(list) => w.message(5, |a| {
            for s in list {
                a.message(1, |x| x.string(1, s));
            }
        }),
    }
}

/// `KeyValue`: key 1, value 2.
fn key_value(w: &mut Writer, field: u64, key: &str, v: &AttrValue) {
    w.message(field, |kv| {
        kv.string(1, key);
        kv.message(2, |x| any_value(x, v));
    });
}

/// `Span`: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5, kind 6, start 7,
/// end 8, attributes 9, status 15 (`Status`: message 2, code 3).
fn span(w: &mut Writer, s: &Span) {
    w.bytes(1, &s.trace_id);
    w.bytes(2, &s.span_id);
    if let Some(state) = &s.trace_state {
        w.string(3, state);
    }
    if let Some(parent) = &s.parent_span_id {
        w.bytes(4, parent);
    }
    w.string(5, &s.name);
    w.uint(6, s.kind as u64);
    w.fixed64(7, s.start_ns);
    w.fixed64(8, s.end_ns);
    for (k, v) in &s.attributes {
        key_value(w, 9, k, v);
    }
    w.message(15, |st| {
        if let SpanStatus::Error(message) = &s.status {
            st.string(2, message);
            st.uint(3, s.status.code());
        }
    });
}

/// One export request of `spans` under `resource`: `resource_spans` 1 → (`resource` 1 with its
/// `attributes` 1, `scope_spans` 2 → (`scope` 1 with `name` 1 and `version` 2, `spans` 2)).
pub fn encode(resource: &Resource, spans: &[Span]) -> Vec<u8> {
    let mut w = Writer::default();
    w.message(1, |rs| {
        rs.message(1, |r| {
            for (k, v) in &resource.attributes {
                key_value(r, 1, k, v);
            }
        });
        rs.message(2, |ss| {
            ss.message(1, |scope| {
                scope.string(1, resource.scope);
                scope.string(2, resource.version);
            });
            for s in spans {
                ss.message(2, |x| span(x, s));
            }
        });
    });
    w.0
}
