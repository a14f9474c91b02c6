//! A traced request's spans, made once when it ends (a stream's when it settles): the request
//! span (SERVER) with CogniGate's attributes, and one CLIENT span per upstream call in call
//! order, the same order the upstream port numbered their `traceparent`s in. Token usage sits on
//! the serving call's span only, so a backend that sums spans counts it once.

use super::context::TraceContext;
use super::span::{Attrs, Span, SpanKind, SpanStatus};
use crate::cascade::{CandidateAttempt, Failure, KeyTry};
use crate::config::{ProviderKind, TenantConfig};

/// What the request asked for, read from its body only when it is traced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestParams {
    pub max_tokens: Option<u64>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
}

/// What a traced request's spans are made of, gathered as it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestTrace {
    pub context: TraceContext,
    /// `gen_ai.operation.name`: `chat` or `embeddings`.
    pub operation: &'static str,
    pub requested: String,
    pub params: RequestParams,
    /// `gen_ai.input.messages` (JSON), only under `capture_content`.
    pub input_messages: Option<String>,
    pub started_ms: u64,
}

/// The served answer, as read from its body (nothing for a stream the gateway did not read).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResponseFacts {
    pub id: Option<String>,
    pub model: Option<String>,
    pub finish_reasons: Vec<String>,
    /// `gen_ai.output.messages` (JSON), only under `capture_content`.
    pub output_messages: Option<String>,
}

/// How the request ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Billing {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    /// The usage was the gateway's estimate, not the upstream's report.
    pub estimated: bool,
}

pub struct Ending<'a> {
    pub attempts: &'a [CandidateAttempt],
    /// The attempt that served, by index, and its chain position (`X-CogniGate-Fallback-Depth`).
    pub served: Option<usize>,
    pub depth: Option<usize>,
    pub response: ResponseFacts,
    pub billing: Option<Billing>,
    /// `hit` or `miss`, for a request the response cache was used for.
    pub cache: Option<&'static str>,
    pub status: u16,
    /// How the request ended when nothing served (`exhausted`, `rejected`…).
    pub outcome: &'static str,
    pub end_ms: u64,
}

/// `gen_ai.provider.name`: the conventions' well-known value for the provider's API.
pub fn provider_name(cfg: &TenantConfig, provider: &str) -> &'static str {
    let Some(p) = cfg.providers.get(provider) else {
        return "openai";
    };
    match p.kind {
        ProviderKind::Openai => "openai",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::AzureOpenai => "azure.ai.openai",
        ProviderKind::Bedrock => "aws.bedrock",
        ProviderKind::Vertex => "gcp.vertex_ai",
        ProviderKind::Gemini => "gcp.gemini",
    }
}

fn ns(ms: u64) -> u64 {
    ms.saturating_mul(1_000_000)
}

impl RequestTrace {
    /// The request's spans: the request span first, then each upstream call's.
    pub fn spans(&self, cfg: &TenantConfig, end: &Ending<'_>) -> Vec<Span> {
        let mut spans = vec![self.request_span(cfg, end)];
        let mut call = 0u32;
        for (i, attempt) in end.attempts.iter().enumerate() {
            let last = attempt.tries.len().saturating_sub(1);
            for (j, tried) in attempt.tries.iter().enumerate() {
                let n = call;
                call += 1;
                // Never sent: the upstream port numbered it, but no request left.
                if tried.failure == Some(Failure::Unsupported) {
                    continue;
                }
                let serving = end.served == Some(i) && j == last;
                spans.push(self.call_span(cfg, end, (attempt, tried, n), serving));
            }
        }
        spans
    }

    fn request_span(&self, cfg: &TenantConfig, end: &Ending<'_>) -> Span {
        let served = end.served.and_then(|i| end.attempts.get(i));
        let first = end.attempts.first();
        let routed_from = first
            .zip(served)
            .filter(|(f, s)| f.model != s.model || f.provider != s.provider)
            .map(|(f, _)| f.model.clone());
        let depth = end.depth.map(|d| d as u64);
        let mut attrs = Attrs::default()
            .str("gen_ai.operation.name", self.operation)
            .str("gen_ai.request.model", self.requested.clone());
        attrs = self.params(attrs);
        attrs = response(attrs, served.is_some(), &end.response);
        attrs = attrs
            .str("cognigate.tenant", cfg.tenant.as_str())
            .opt_int("cognigate.fallback_depth", depth)
            .bool("cognigate.fallback_used", depth.is_some_and(|d| d > 0))
            .opt_str("cognigate.routed_from", routed_from)
            .opt_double("cognigate.cost_usd", end.billing.and_then(|b| b.cost_usd))
            .opt_str("cognigate.cache", end.cache)
            .bool(
                "cognigate.estimated",
                end.billing.is_some_and(|b| b.estimated),
            )
            .int("http.response.status_code", u64::from(end.status));
        let status = if end.status >= 500 {
            attrs = attrs.str("error.type", end.outcome);
            SpanStatus::Error(end.outcome.to_owned())
        } else {
            SpanStatus::Unset
        };
        Span {
            trace_id: self.context.trace_id,
            span_id: self.context.span_id(0),
            parent_span_id: self.context.parent,
            trace_state: self.context.tracestate.clone(),
            name: format!("{} {}", self.operation, self.requested),
            kind: SpanKind::Server,
            start_ns: ns(self.started_ms),
            end_ns: ns(end.end_ms),
            attributes: attrs.0,
            status,
        }
    }

    fn params(&self, attrs: Attrs) -> Attrs {
        attrs
            .opt_int("gen_ai.request.max_tokens", self.params.max_tokens)
            .opt_double("gen_ai.request.temperature", self.params.temperature)
            .opt_double("gen_ai.request.top_p", self.params.top_p)
    }

    fn call_span(
        &self,
        cfg: &TenantConfig,
        end: &Ending<'_>,
        (attempt, tried, n): (&CandidateAttempt, &KeyTry, u32),
        serving: bool,
    ) -> Span {
        let upstream = cfg
            .models
            .get(attempt.model.as_str())
            .map_or(attempt.model.as_str(), |m| m.upstream_model.as_str());
        let mut attrs = Attrs::default()
            .str("gen_ai.operation.name", self.operation)
            .str(
                "gen_ai.provider.name",
                provider_name(cfg, &attempt.provider),
            )
            .str("gen_ai.request.model", upstream)
            .str("cognigate.provider", attempt.provider.clone())
            .str("cognigate.model", attempt.model.clone())
            .str("cognigate.key_id", tried.key_id.clone());
        attrs = self.params(attrs);
        attrs = attrs.opt_int("http.response.status_code", tried.status.map(u64::from));
        let mut end_ms = tried.at.saturating_add(tried.ms);
        if serving {
            attrs = response(attrs, true, &end.response);
            if let Some(b) = end.billing {
                attrs = attrs
                    .int("gen_ai.usage.input_tokens", b.input_tokens)
                    .int("gen_ai.usage.output_tokens", b.output_tokens);
            }
            attrs = attrs.opt_str(
                "gen_ai.output.messages",
                end.response.output_messages.clone(),
            );
            // A served stream's call lasts until the stream settles.
            end_ms = end_ms.max(end.end_ms);
        }
        attrs = attrs.opt_str("gen_ai.input.messages", self.input_messages.clone());
        if attempt.refusal && !serving {
            attrs = attrs.bool("cognigate.refusal", true);
        }
        let status = match tried.failure {
            Some(f) => {
                attrs = attrs.str("error.type", f.as_str());
                SpanStatus::Error(f.as_str().to_owned())
            }
            None => SpanStatus::Unset,
        };
        Span {
            trace_id: self.context.trace_id,
            span_id: self.context.span_id(n + 1),
            parent_span_id: Some(self.context.span_id(0)),
            trace_state: self.context.tracestate.clone(),
            name: format!("{} {upstream}", self.operation),
            kind: SpanKind::Client,
            start_ns: ns(tried.at),
            end_ns: ns(end_ms),
            attributes: attrs.0,
            status,
        }
    }
}

fn response(attrs: Attrs, served: bool, r: &ResponseFacts) -> Attrs {
    if !served {
        return attrs;
    }
    attrs
        .opt_str("gen_ai.response.id", r.id.clone())
        .opt_str("gen_ai.response.model", r.model.clone())
        .strs("gen_ai.response.finish_reasons", r.finish_reasons.clone())
}

#[cfg(test)]
#[path = "request_trace_tests.rs"]
mod tests;
