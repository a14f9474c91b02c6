//! Spec §3, running the cascade: candidates left to right, keys rotated inside each one, parked
//! keys skipped, open breakers skipped, a request-caused 4xx stopping everything.
//!
//! Written against three ports so the whole loop runs on the host with fakes: `RoutingState` (the
//! tenant/provider Durable Object), `Upstream` (fetch) and `Clock`.

pub mod body_limit;
mod candidate;
pub mod classify;
pub mod context_window;
mod keys;
pub mod owed_report;
pub mod platform_status;
pub mod precheck;
pub mod quota_headers;
pub mod rate_limit_signals;
pub mod refusal;
pub mod retry;
pub mod retry_after;
mod samples;
pub mod upstream_body;

use crate::api::{ApiError, AttemptSummary, ErrorKind};
use crate::config::{BreakerSettings, CatalogModel, Provider, ProviderKey, ProviderName};
use crate::health::{AcquireRequest, Lease, ReportRequest};
use crate::routing::stats::isolate_stats::ProviderStats;
use crate::routing::Candidate;
pub use candidate::acquire_request;
use candidate::Position;
pub use classify::{classify_status, Failure, StatusClass};
pub use owed_report::OwedReport;
pub use refusal::{PolicyFallback, RefusalPolicy, RefusalSeen};
pub use samples::usage_sample;
pub use upstream_body::{StreamHead, UpstreamBody};

#[allow(async_fn_in_trait)]
pub trait Clock {
    fn now_ms(&self) -> u64;
    /// Waits `ms` (the backoff before a same-candidate retry); a fake clock just moves on.
    async fn sleep(&self, ms: u64);
    /// 64 uniform random bits for backoff jitter, injected so host tests are deterministic.
    fn random(&self) -> u64;
}

/// The routing Durable Object of one tenant/provider.
#[allow(async_fn_in_trait)]
pub trait RoutingState {
    /// The one round trip before a candidate is tried: breaker admission and key order.
    async fn acquire(&self, provider: &ProviderName, req: AcquireRequest) -> Lease;
    async fn report(&self, provider: &ProviderName, req: ReportRequest);

    /// Runs `f` on this isolate's live stats of `provider`: answers' headroom figures go in
    /// there (and reach the object with its stats, no call of their own), and `most_remaining`
    /// reads its order from there. A port without live stats does nothing.
    fn with_stats(&self, _provider: &ProviderName, _f: &mut dyn FnMut(&mut ProviderStats)) {}
}

/// One upstream call: this model, on this provider, with this key.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub provider: &'a Provider,
    pub model: &'a CatalogModel,
    pub key: &'a ProviderKey,
    pub timeout_ms: u64,
}

/// How an upstream call ended, as the edge observed it.
#[derive(Debug)]
pub enum UpstreamReply<B> {
    /// A 2xx whose body is ready to hand to the caller.
    Success {
        status: u16,
        body: B,
    },
    /// A non-2xx; `text` is the provider's error body (for pass-through and the log only).
    Status {
        status: u16,
        retry_after: Option<String>,
        /// The rate-limit reset headers a signal may read (`rate_limit_signals::is_signal_header`).
        headers: Vec<(String, String)>,
        text: String,
    },
    /// No response headers, or no complete body, within the call's timeout.
    Timeout,
    Network(String),
    /// A 2xx that cannot be used: a body that is not what the API promises.
    Broken {
        status: u16,
        detail: String,
    },
    /// A 2xx whose body passed `body_limit::MAX_SUCCESS_BODY` (failure `oversized`).
    Oversized {
        status: u16,
    },
    /// The caller went away; nothing is held against the key or model.
    Cancelled,
    /// Never sent: the candidate cannot serve this kind of request.
    Unsupported,
}

#[allow(async_fn_in_trait)]
pub trait Upstream {
    type Body;
    async fn send(&self, call: Call<'_>) -> UpstreamReply<Self::Body>;

    /// How the request fits `model`'s context window (`context_window::fit`). A port that holds
    /// no request body (the host fakes) fits everything, which is the spec's behaviour.
    fn fit(&self, _model: &CatalogModel) -> context_window::Fit {
        context_window::Fit::Fits
    }

    /// Whether a provider of this family can serve the request's surface (embeddings on an
    /// Anthropic provider cannot). A port that holds no request (the host fakes) says yes.
    fn supports(&self, _provider: &Provider) -> bool {
        true
    }

    /// Whether a served body is a safety refusal (`providers::refusal`); asked only for a name
    /// with `on_refusal: fallback`. A port that cannot tell (a stream) says no.
    fn is_refusal(&self, _body: &Self::Body) -> bool {
        false
    }

    /// The quota headers (`quota_headers::is_quota_header`) of the answer `send` last returned,
    /// taken: asked once after every call. A port that keeps none (the host fakes) has none.
    fn take_quota_headers(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// One key tried inside one candidate (one upstream call), for the log line and its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTry {
    pub key_id: String,
    /// When the call was made (epoch ms).
    pub at: u64,
    pub status: Option<u16>,
    pub failure: Option<Failure>,
    /// The upstream's own words: log only, never a response.
    pub error: Option<String>,
    pub ms: u64,
}

/// One chain position's attempt. `failure` is `None` for the candidate that served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateAttempt {
    pub provider: String,
    pub model: String,
    pub failure: Option<Failure>,
    pub status: Option<u16>,
    pub tries: Vec<KeyTry>,
    /// Which try of the candidate this is, for a provider with `retry` (0 first); `None` otherwise.
    pub retry: Option<u32>,
    /// When the reason this attempt was skipped or failed ends, if known (epoch ms): an open
    /// breaker, a used-up `rpm`, a pool every key of which is parked.
    pub ends_at: Option<u64>,
    /// Messages dropped to fit this candidate's window (`X-CogniGate-Truncate: oldest`).
    pub truncated: Option<usize>,
    /// It answered with a safety refusal (seen only for a name with `on_refusal: fallback`).
    pub refusal: bool,
}

impl CandidateAttempt {
    pub fn new(candidate: &Candidate<'_>, retry: Option<u32>) -> Self {
        Self {
            provider: candidate.provider.name.to_string(),
            model: candidate.model.id.to_string(),
            failure: None,
            status: None,
            tries: Vec::new(),
            retry,
            ends_at: None,
            truncated: None,
            refusal: false,
        }
    }
}

#[derive(Debug)]
pub enum Ending<B> {
    Served {
        status: u16,
        body: B,
        /// Candidates that failed (or refused) before this one.
        depth: usize,
        owed_report: OwedReport,
        /// Set when a refusal was seen (`on_refusal: fallback`): which answer the caller gets,
        /// and the ones billed beside it.
        refusal: Option<Box<RefusalSeen<B>>>,
    },
    /// A request-caused 4xx: the provider's status and message, unchanged.
    RequestCaused(ApiError),
    Exhausted,
    Cancelled,
}

#[derive(Debug)]
pub struct Run<B> {
    pub ending: Ending<B>,
    pub attempts: Vec<CandidateAttempt>,
}

impl<B> Run<B> {
    pub fn exhausted_error(&self) -> ApiError {
        exhausted_error(&self.attempts)
    }
}

/// The spec's 502: only the classification crosses this boundary, never upstream text.
pub fn exhausted_error(attempts: &[CandidateAttempt]) -> ApiError {
    let attempts: Vec<AttemptSummary> = attempts
        .iter()
        .map(|a| AttemptSummary {
            provider: a.provider.clone(),
            model: a.model.clone(),
            failure: a.failure.unwrap_or(Failure::Server).as_str(),
            status: a.status,
            retry: a.retry,
        })
        .collect();
    // Retries are extra entries of one candidate, not extra candidates.
    let candidates = attempts
        .iter()
        .filter(|a| a.retry.unwrap_or(0) == 0)
        .count();
    ApiError::new(
        ErrorKind::UpstreamExhausted,
        format!("All {candidates} routing candidates failed."),
    )
    .with_attempts(attempts)
}

/// `Retry-After` for the aggregated 502, in whole seconds (rounded up, at least 1): only when
/// every attempt was skipped or failed for a reason with a known end, until the soonest of them.
pub fn exhausted_retry_after_secs(attempts: &[CandidateAttempt], now_ms: u64) -> Option<u64> {
    let mut soonest: Option<u64> = None;
    for a in attempts {
        let end = a.ends_at?;
        soonest = Some(soonest.map_or(end, |s| s.min(end)));
    }
    let ms = soonest?.saturating_sub(now_ms);
    Some(ms.div_ceil(1000).max(1))
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Once spent, no new upstream call is started.
    pub budget_ms: u64,
    pub breaker: BreakerSettings,
    /// Admission grants (`ROUTING_LEASE_MS`); 0 asks the routing object for every candidate.
    pub lease_ms: u64,
    /// The longest a `Retry-After` parks a key (`MAX_PARK_MS`).
    pub max_park_ms: u64,
    /// The tenant is in degraded mode with scheduled probes on: no attempt is spent on
    /// a candidate whose breaker is open, even past its open duration (the scheduled pass probes
    /// it): its acquire says `leave_probe`, and it is skipped like an open one.
    pub degraded: bool,
}

/// How one candidate ended inside the loop.
enum CandidateEnd<B> {
    Served {
        status: u16,
        body: B,
    },
    RequestCaused(ApiError),
    Failed {
        failure: Failure,
        status: Option<u16>,
    },
    Cancelled,
}

pub struct Cascade<'p, S, U, C> {
    pub state: &'p S,
    pub upstream: &'p U,
    pub clock: &'p C,
    pub limits: Limits,
}

impl<S: RoutingState, U: Upstream, C: Clock> Cascade<'_, S, U, C> {
    /// The spec's cascade: a refusal is an answer like any other.
    pub async fn run(&self, chain: &[Candidate<'_>]) -> Run<U::Body> {
        self.run_with(chain, RefusalPolicy::Answer, None).await
    }

    /// The cascade with the requested name's refusal policy (`refusal.rs`); `refusal_only` is
    /// asked after a refusal once the chain's later positions are spent (`Route::refusal_only`).
    pub async fn run_with(
        &self,
        chain: &[Candidate<'_>],
        policy: RefusalPolicy,
        refusal_only: Option<Candidate<'_>>,
    ) -> Run<U::Body> {
        let started = self.clock.now_ms();
        let mut attempts: Vec<CandidateAttempt> = Vec::with_capacity(chain.len());
        // Candidates that failed before the one that serves (`X-CogniGate-Fallback-Depth`);
        // retries of one candidate and candidates skipped for their context window cost none.
        let mut depth = 0;
        for (at, candidate) in chain.iter().enumerate() {
            let ending = match self.position(candidate, started, &mut attempts).await {
                Position::Served {
                    status,
                    body,
                    owed_report,
                } if policy.watches() && self.upstream.is_refusal(&body) => {
                    let held = refusal::Held {
                        status,
                        body,
                        depth,
                        owed_report,
                        attempt: attempts.len().saturating_sub(1),
                    };
                    let mut rest = chain.get(at + 1..).unwrap_or_default().to_vec();
                    rest.extend(refusal_only);
                    self.after_refusal(held, &rest, policy, started, &mut attempts)
                        .await
                }
                Position::Served {
                    status,
                    body,
                    owed_report,
                } => Ending::Served {
                    status,
                    body,
                    depth,
                    owed_report,
                    refusal: None,
                },
                Position::RequestCaused(err) => Ending::RequestCaused(err),
                Position::Cancelled => Ending::Cancelled,
                Position::Failed { costs_depth } => {
                    depth += usize::from(costs_depth);
                    continue;
                }
            };
            return Run { ending, attempts };
        }
        Run {
            ending: Ending::Exhausted,
            attempts,
        }
    }

    fn remaining(&self, started: u64) -> u64 {
        let elapsed = self.clock.now_ms().saturating_sub(started);
        self.limits.budget_ms.saturating_sub(elapsed)
    }

    async fn send_report(&self, provider: &ProviderName, report: ReportRequest) {
        let provider = provider.clone();
        send_owed(self.state, OwedReport { provider, report }).await;
    }
}

/// Sends the served candidate's report, if it would change anything.
pub async fn send_owed<S: RoutingState>(state: &S, owed: OwedReport) {
    if owed.report.changes_anything() {
        state.report(&owed.provider, owed.report).await;
    }
}
