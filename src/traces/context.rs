//! A request's place in a trace (W3C Trace Context): the caller's `traceparent` joined when it
//! sent one, else a new trace. Span ids are derived from the trace and the request id, so the
//! id sent upstream in an attempt's `traceparent` and the id its span is exported under are one
//! value without being kept between the call and the export, and no random draw is made.

use sha2::{Digest, Sha256};

/// The longest `tracestate` passed on; a longer one is dropped (W3C allows receivers to).
pub const MAX_TRACESTATE: usize = 512;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: [u8; 16],
    /// The caller's span, the request span's parent.
    pub parent: Option<[u8; 8]>,
    /// Exported: the caller's sampled flag when it sent a parent, else `sample_ratio`'s draw.
    pub sampled: bool,
    pub tracestate: Option<String>,
    request_id: String,
}

/// `traceparent` read as W3C says: `version-traceid-parentid-flags`, lowercase hex, neither id
/// all zeros, version `ff` invalid, and a later version's extra fields ignored.
pub fn parse_traceparent(value: &str) -> Option<([u8; 16], [u8; 8], bool)> {
    let value = value.trim();
    let mut parts = value.split('-');
    let version = parts.next()?;
    let (trace, parent, flags) = (parts.next()?, parts.next()?, parts.next()?);
    let lower_hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !lower_hex(version, 2) || version == "ff" || !lower_hex(flags, 2) {
        return None;
    }
    if version == "00" && parts.next().is_some() {
        return None;
    }
    if !lower_hex(trace, 32) || !lower_hex(parent, 16) {
        return None;
    }
    let trace_id: [u8; 16] = hex::decode(trace).ok()?.try_into().ok()?;
    let span_id: [u8; 8] = hex::decode(parent).ok()?.try_into().ok()?;
    if trace_id == [0; 16] || span_id == [0; 8] {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some((trace_id, span_id, flags & 1 == 1))
}

/// Whether a trace without a parent is exported: its id's low 8 bytes against `ratio` of their
/// range (OpenTelemetry's trace-id ratio), so every span of one trace gets the same answer.
pub fn ratio_sampled(trace_id: &[u8; 16], ratio: f64) -> bool {
    if ratio >= 1.0 {
        return true;
    }
    if ratio <= 0.0 {
        return false;
    }
    let mut low = [0; 8];
    low.copy_from_slice(&trace_id[8..]);
    let draw = u64::from_be_bytes(low) >> 11;
    (draw as f64) < ratio * (1u64 << 53) as f64
}

fn digest(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u32).to_be_bytes());
        h.update(p);
    }
    h.finalize().into()
}

impl TraceContext {
    /// The request's context from the caller's headers and the tenant's `sample_ratio`.
    pub fn begin(
        traceparent: Option<&str>,
        tracestate: Option<&str>,
        request_id: &str,
        sample_ratio: f64,
    ) -> Self {
        let joined = traceparent.and_then(parse_traceparent);
        let (trace_id, parent, sampled) = match joined {
            Some((trace, parent, sampled)) => (trace, Some(parent), sampled),
            None => {
                let d = digest(&[b"trace", request_id.as_bytes()]);
                let mut trace = [0; 16];
                trace.copy_from_slice(&d[..16]);
                (trace, None, ratio_sampled(&trace, sample_ratio))
            }
        };
        let tracestate = tracestate
            .filter(|s| joined.is_some() && !s.is_empty() && s.len() <= MAX_TRACESTATE)
            .filter(|s| s.bytes().all(|b| (0x20..0x7f).contains(&b)))
            .map(str::to_owned);
        Self {
            trace_id,
            parent,
            sampled,
            tracestate,
            request_id: request_id.to_owned(),
        }
    }

    /// The request span's id (`0`) and each upstream call's (`1 + n`, in call order).
    pub fn span_id(&self, n: u32) -> [u8; 8] {
        let d = digest(&[
            b"span",
            &self.trace_id,
            self.request_id.as_bytes(),
            &n.to_be_bytes(),
        ]);
        let mut id = [0; 8];
        id.copy_from_slice(&d[..8]);
        if id == [0; 8] {
            id[7] = 1;
        }
        id
    }

    /// The trace headers upstream call `call` carries: its span's `traceparent`, and the
    /// caller's `tracestate` passed on.
    pub fn upstream_headers(&self, call: u32) -> Vec<(&'static str, String)> {
        let mut headers = vec![("traceparent", self.upstream_traceparent(call))];
        headers.extend(self.tracestate.clone().map(|s| ("tracestate", s)));
        headers
    }

    /// The `traceparent` sent with upstream call `call` (0 first): the attempt span as parent.
    pub fn upstream_traceparent(&self, call: u32) -> String {
        format!(
            "00-{}-{}-{}",
            hex::encode(self.trace_id),
            hex::encode(self.span_id(call + 1)),
            if self.sampled { "01" } else { "00" }
        )
    }
}

#[cfg(test)]
#[path = "context_tests.rs"]
mod tests;
