//! A traced request in flight: its trace, begun once the tenant's config is known, and where its
//! spans go. A request whose trace is not sampled is not traced (its calls still carry a
//! `traceparent`, flagged unsampled); a stream's spans are made when its answer starts and
//! finished when it settles (`Unsettled`), with its usage and its end.

use super::answer_facts::{input_messages, request_params};
use super::request_trace::{Billing, Ending, RequestTrace};
use super::span::{AttrValue, Span};
use super::TraceContext;
use crate::api::ChatRequest;
use crate::config::otel::OtelExport;
use crate::config::{TenantConfig, TenantId};
use crate::surfaces::Surface;
use crate::usage::{UsageRecord, UsageSource};
use std::rc::Rc;

pub struct Traced {
    pub trace: RequestTrace,
    pub cfg: Rc<TenantConfig>,
}

/// The request's place in a trace when the tenant exports traces (`None`: `otel` is off, and
/// no header is read).
pub fn context_of<'h>(
    cfg: &TenantConfig,
    header: impl Fn(&str) -> Option<&'h str>,
    request_id: &str,
) -> Option<TraceContext> {
    let otel = cfg.otel.as_ref()?;
    let (traceparent, tracestate) = (header("traceparent"), header("tracestate"));
    Some(TraceContext::begin(
        traceparent,
        tracestate,
        request_id,
        otel.sample_ratio,
    ))
}

/// `chat` for the chat surfaces, `embeddings` for embeddings.
pub fn operation(surface: Surface) -> &'static str {
    match surface {
        Surface::Embeddings => "embeddings",
        _ => "chat",
    }
}

/// Usage as the spans carry it, from the request's record.
pub fn billing(record: &UsageRecord) -> Option<Billing> {
    let tokens = record.tokens?;
    Some(Billing {
        input_tokens: tokens.prompt,
        output_tokens: tokens.completion,
        cost_usd: record.cost_usd,
        estimated: record.usage_source == UsageSource::Estimated,
    })
}

impl Traced {
    /// The traced request, when its context is sampled.
    pub fn begin(
        cfg: &Rc<TenantConfig>,
        context: Option<&TraceContext>,
        (surface, chat): (Surface, &ChatRequest),
        started_ms: u64,
    ) -> Option<Self> {
        let context = context.filter(|c| c.sampled)?;
        let capture = cfg.otel.as_ref().is_some_and(|o| o.capture_content);
        let trace = RequestTrace {
            context: context.clone(),
            operation: operation(surface),
            requested: chat.model.clone(),
            params: request_params(chat),
            input_messages: capture.then(|| input_messages(chat)).flatten(),
            started_ms,
        };
        Some(Self {
            trace,
            cfg: cfg.clone(),
        })
    }

    pub fn tenant(&self) -> &TenantId {
        &self.cfg.tenant
    }

    pub fn export(&self) -> Option<&OtelExport> {
        self.cfg.otel.as_ref()
    }

    pub fn capture(&self) -> bool {
        self.export().is_some_and(|o| o.capture_content)
    }

    pub fn spans(&self, end: &Ending<'_>) -> Vec<Span> {
        self.trace.spans(&self.cfg, end)
    }

    /// A served stream's spans as its answer starts, to be settled when it ends.
    pub fn unsettled(self, end: &Ending<'_>) -> Unsettled {
        let spans = self.spans(end);
        // The serving call is the last try of the serving attempt, numbered in call order.
        let call = end.served.and_then(|i| {
            let before: usize = end.attempts[..i].iter().map(|a| a.tries.len()).sum();
            let own = end.attempts[i].tries.len();
            (own > 0).then(|| (before + own) as u32)
        });
        let id = call.map(|n| self.trace.context.span_id(n));
        let serving = id.and_then(|id| spans.iter().position(|s| s.span_id == id));
        Unsettled {
            spans,
            serving,
            traced: self,
        }
    }
}

/// A stream's spans, waiting for its end and usage.
pub struct Unsettled {
    spans: Vec<Span>,
    /// The serving call's span, by index (the request span is 0).
    serving: Option<usize>,
    traced: Traced,
}

impl Unsettled {
    /// The spans as the stream settles at `now_ms` with `record` (`None`: no record).
    pub fn settle(
        mut self,
        record: Option<&UsageRecord>,
        now_ms: u64,
    ) -> (TenantId, Option<OtelExport>, Vec<Span>) {
        let end_ns = now_ms.saturating_mul(1_000_000);
        let billing = record.and_then(billing);
        if let Some(request) = self.spans.first_mut() {
            request.end_ns = request.end_ns.max(end_ns);
            if let Some(b) = billing {
                request
                    .attributes
                    .retain(|(k, _)| *k != "cognigate.estimated");
                let cost = b.cost_usd.filter(|c| c.is_finite()).map(AttrValue::Double);
                request
                    .attributes
                    .extend(cost.map(|c| ("cognigate.cost_usd", c)));
                request
                    .attributes
                    .push(("cognigate.estimated", AttrValue::Bool(b.estimated)));
            }
        }
        if let Some(span) = self.serving.and_then(|i| self.spans.get_mut(i)) {
            span.end_ns = span.end_ns.max(end_ns);
            if let Some(b) = billing {
                let tokens = |n: u64| AttrValue::Int(i64::try_from(n).unwrap_or(i64::MAX));
                span.attributes
                    .push(("gen_ai.usage.input_tokens", tokens(b.input_tokens)));
                span.attributes
                    .push(("gen_ai.usage.output_tokens", tokens(b.output_tokens)));
            }
        }
        let export = self.traced.export().cloned();
        (self.traced.tenant().clone(), export, self.spans)
    }
}
