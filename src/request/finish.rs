//! Finish: how a caller request ends, told once. Every path through the order ends here with
//! one request event (`events::log_line`) and, for a request whose tenant and model name were
//! read, one metric, both from what the stages established by then.

use super::ports::{Meter, Ports};
use super::Progress;
use crate::api::{ApiError, ErrorKind};
use crate::cascade::{CandidateAttempt, Clock};
use crate::config::TenantId;
use crate::events::log_line::{LogUsage, RequestLog};
use crate::events::{Event, EventSink};
use crate::metrics::counts::{MetricOutcome, RequestMetric};
use crate::metrics::request_metric::{unserved, upstream_calls};
use crate::response_cache::stored::StoredMeta;
use crate::surfaces::Surface;
use crate::traces::request_trace::Ending;
use crate::traces::traced::{Traced, Unsettled};
use crate::traces::ResponseFacts;
use crate::usage::{TokenCounts, UsageRecord};

/// What the request's event and metric are made from.
pub struct Finish<'a> {
    pub surface: Surface,
    pub request_id: &'a str,
    /// The tenant and the model asked for, as far as the request got.
    pub progress: Progress,
    pub started: u64,
    /// The request's trace, while the order still holds it (`None`: not traced, or handed to
    /// the answer).
    pub trace: Option<Traced>,
}

/// How the request ended, for its event.
pub struct Ended<'a> {
    pub outcome: &'static str,
    pub status: u16,
    pub attempts: &'a [CandidateAttempt],
    pub usage: Option<LogUsage>,
}

impl Finish<'_> {
    /// The request's one event.
    pub fn emit<P: Ports>(&self, p: &P, ended: Ended<'_>) {
        let (d1_queries, durable_object_calls) = p.meter().calls();
        let line = RequestLog {
            surface: self.surface.as_str(),
            request_id: self.request_id,
            tenant: self.progress.tenant.as_ref().map_or("", |t| t.as_str()),
            requested: self.progress.requested.as_deref().unwrap_or(""),
            task: self.progress.task,
            agent: self.progress.agent,
            outcome: ended.outcome,
            status: ended.status,
            attempts: ended.attempts,
            total_ms: p.clock().now_ms().saturating_sub(self.started),
            d1_queries,
            durable_object_calls,
            usage: ended.usage,
        };
        p.events().emit(&Event::Request(&line));
        if self.trace.is_some() {
            let end = Ending {
                attempts: ended.attempts,
                served: None,
                depth: None,
                response: ResponseFacts::default(),
                billing: None,
                cache: (ended.outcome == "cache_hit").then_some("hit"),
                status: ended.status,
                outcome: ended.outcome,
                end_ms: p.clock().now_ms(),
            };
            super::trace_end::export(p, self.trace.as_ref(), &end);
        }
    }

    /// A response-cache hit: counted as served by the stored answer's model at $0 with no
    /// upstream attempt.
    pub fn count_hit<P: Ports>(&self, p: &P, hit: &StoredMeta, now: u64) {
        let metric = self.served_metric(&hit.model, hit.depth, &[], now);
        self.count_served(p, metric, &hit.provider, None);
    }

    /// Counts a request that served nothing under the requested name. A request whose tenant
    /// or model name was never read (a bad key, an unreadable body) is not counted.
    pub fn count_unserved<P: Ports>(
        &self,
        p: &P,
        outcome: MetricOutcome,
        attempts: &[CandidateAttempt],
        now: u64,
    ) {
        let Some(requested) = self.progress.requested.as_ref().filter(|r| !r.is_empty()) else {
            return;
        };
        let elapsed = now.saturating_sub(self.started);
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
        self.count(p.meter(), &metric, "", None);
    }

    /// A request rejected with `err` after its model name was read.
    pub fn count_rejected<P: Ports>(&self, p: &P, err: &ApiError, now: u64) {
        let outcome = match err.kind() {
            ErrorKind::NoCandidates => MetricOutcome::NoCandidates,
            _ => MetricOutcome::Refused,
        };
        self.count_unserved(p, outcome, &[], now);
    }

    /// A served request's metric as its answer starts (`depth`: `X-CogniGate-Fallback-Depth`).
    pub fn served_metric(
        &self,
        model: &str,
        depth: usize,
        attempts: &[CandidateAttempt],
        now: u64,
    ) -> RequestMetric {
        let ttfb_ms = now.saturating_sub(self.started);
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
    pub fn count_served<P: Ports>(
        &self,
        p: &P,
        metric: RequestMetric,
        provider: &str,
        usage: Option<LogUsage>,
    ) {
        let metric = RequestMetric {
            cost_usd: usage.and_then(|u| u.cost_usd),
            ..metric
        };
        let tokens = usage.map(|u| TokenCounts::new(u.prompt_tokens, u.completion_tokens, 0));
        self.count(p.meter(), &metric, provider, tokens);
    }

    /// A served stream's metric, counted when the stream ends.
    pub fn stream_metric(&self, metric: RequestMetric, provider: &str) -> StreamMetric {
        StreamMetric {
            tenant: self.progress.tenant.clone(),
            metric,
            provider: provider.to_owned(),
            started_ms: self.started,
            trace: None,
        }
    }

    fn count(
        &self,
        meter: &impl Meter,
        metric: &RequestMetric,
        provider: &str,
        tokens: Option<TokenCounts>,
    ) {
        if let Some(tenant) = &self.progress.tenant {
            meter.count(tenant, metric, provider, tokens);
        }
    }
}

/// A served stream's metric, finished when the stream ends: its latency is then known, and
/// its tokens and cost.
pub struct StreamMetric {
    /// `None`: the request's tenant is unknown, and it is not counted.
    pub tenant: Option<TenantId>,
    pub metric: RequestMetric,
    pub provider: String,
    pub started_ms: u64,
    /// The stream's spans, settled with its end.
    pub trace: Option<Unsettled>,
}

impl StreamMetric {
    /// The metric as the stream ends (`record`: its usage, when it had one), and its tenant.
    pub fn at_end(
        mut self,
        record: Option<&UsageRecord>,
        now_ms: u64,
    ) -> Option<(TenantId, RequestMetric, String, Option<TokenCounts>)> {
        self.metric.latency_ms = now_ms.saturating_sub(self.started_ms);
        self.metric.cost_usd = record.and_then(|r| r.cost_usd);
        let tokens = record.and_then(|r| r.tokens);
        Some((self.tenant?, self.metric, self.provider, tokens))
    }
}
