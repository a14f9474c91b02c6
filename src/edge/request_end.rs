//! How a caller request ends on the edge: its one log line (`events::log_line`) and its metric
//! (`request_metrics`), both from what the request path knows at its end.

use super::events::{ConsoleEvents, Event, EventSink};
use super::http::now_ms;
use super::metrics::Metrics;
use super::metrics_sink::Extra;
use super::request_metrics::{self, StreamMetric};
use crate::api::{ApiError, ErrorKind};
use crate::cascade::CandidateAttempt;
use crate::events::log_line::{LogUsage, RequestLog};
use crate::metrics::counts::{MetricOutcome, RequestMetric};
use crate::metrics::request_metric::{unserved, upstream_calls};
use crate::request::Progress;
use crate::response_cache::stored::StoredMeta;
use crate::surfaces::Surface;
use crate::usage::TokenCounts;
use worker::{Context, Env};

pub(super) struct LogContext<'a> {
    pub surface: Surface,
    pub request_id: &'a str,
    /// The tenant and the model asked for, as far as the request got.
    pub progress: Progress,
    pub started: u64,
    pub metrics: &'a Metrics,
    pub env: &'a Env,
    pub ctx: &'a Context,
}

impl LogContext<'_> {
    pub fn emit(&self, outcome: &str, status: u16, attempts: &[CandidateAttempt]) {
        self.emit_with(outcome, status, attempts, None);
    }

    pub fn emit_with(
        &self,
        outcome: &str,
        status: u16,
        attempts: &[CandidateAttempt],
        usage: Option<LogUsage>,
    ) {
        let line = RequestLog {
            surface: self.surface.as_str(),
            request_id: self.request_id,
            tenant: self.progress.tenant.as_ref().map_or("", |t| t.as_str()),
            requested: self.progress.requested.as_deref().unwrap_or(""),
            outcome,
            status,
            attempts,
            total_ms: now_ms().saturating_sub(self.started),
            d1_queries: self.metrics.d1_queries(),
            durable_object_calls: self.metrics.durable_object_calls(),
            usage,
        };
        ConsoleEvents.emit(&Event::Request(&line));
    }

    /// A response-cache hit: logged, and counted as served by the stored answer's
    /// model at $0 with no upstream attempt.
    pub fn cache_hit(&self, hit: &StoredMeta) {
        self.emit("cache_hit", 200, &[]);
        let metric = self.served_metric(&hit.model, hit.depth, &[]);
        self.count_served(metric, &hit.provider, None);
    }

    /// Counts a request that served nothing under the requested name. A request whose tenant
    /// or model name was never read (a bad key, an unreadable body) is not counted.
    pub fn count_unserved(&self, outcome: MetricOutcome, attempts: &[CandidateAttempt]) {
        let Some(requested) = self.progress.requested.as_ref().filter(|r| !r.is_empty()) else {
            return;
        };
        let elapsed = now_ms().saturating_sub(self.started);
        let metric = RequestMetric {
            model: requested.clone(),
            configured: self.progress.requested_configured,
            outcome,
            depth: unserved(attempts).1,
            ttfb_ms: elapsed,
            latency_ms: elapsed,
            attempts: upstream_calls(attempts),
            cost_usd: None,
        };
        self.count(&metric, "", None);
    }

    /// A request rejected with `err` after its model name was read.
    pub fn count_rejected(&self, err: &ApiError) {
        let outcome = match err.kind() {
            ErrorKind::NoCandidates => MetricOutcome::NoCandidates,
            _ => MetricOutcome::Refused,
        };
        self.count_unserved(outcome, &[]);
    }

    /// A served request's metric as its answer starts (`depth`: `X-CogniGate-Fallback-Depth`).
    pub fn served_metric(
        &self,
        model: &str,
        depth: usize,
        attempts: &[CandidateAttempt],
    ) -> RequestMetric {
        let ttfb_ms = now_ms().saturating_sub(self.started);
        RequestMetric {
            model: model.to_owned(),
            configured: true,
            outcome: MetricOutcome::Served,
            depth: u32::try_from(depth).unwrap_or(u32::MAX),
            ttfb_ms,
            latency_ms: ttfb_ms,
            attempts: upstream_calls(attempts),
            cost_usd: None,
        }
    }

    /// Counts a non-streamed served request with its usage, when known.
    pub fn count_served(&self, metric: RequestMetric, provider: &str, usage: Option<LogUsage>) {
        let metric = RequestMetric {
            cost_usd: usage.and_then(|u| u.cost_usd),
            ..metric
        };
        let tokens = usage.map(|u| (u.prompt_tokens, u.completion_tokens));
        self.count(&metric, provider, tokens);
    }

    /// A served stream's metric, counted when the stream settles (`usage_sink`).
    pub fn stream_metric(&self, metric: RequestMetric, provider: &str) -> StreamMetric {
        StreamMetric {
            tenant: self.progress.tenant.clone(),
            metric,
            provider: provider.to_owned(),
            started_ms: self.started,
        }
    }

    /// Counts a request (tokens: prompt and completion, when known).
    pub fn count(&self, metric: &RequestMetric, provider: &str, tokens: Option<(u64, u64)>) {
        let Some(tenant) = &self.progress.tenant else {
            return;
        };
        let extra = Extra {
            provider,
            tokens: tokens.map(|(p, c)| TokenCounts::new(p, c, 0)),
        };
        request_metrics::record(self.env, self.ctx, tenant, metric, extra);
    }
}
