//! Spec §3, running the cascade: candidates left to right, keys rotated inside each one, parked
//! keys skipped, open breakers skipped, a request-caused 4xx stopping everything.
//!
//! Written against three ports so the whole loop runs on the host with fakes: `RoutingState` (the
//! tenant/provider Durable Object), `Upstream` (fetch) and `Clock`.

pub mod body_limit;
pub mod classify;
pub mod log_line;
pub mod retry_after;

use crate::api::{passthrough_error, ApiError, AttemptSummary, ErrorType};
use crate::config::{BreakerSettings, CatalogModel, Provider, ProviderKey, ProviderName};
use crate::routing::Candidate;
use crate::state::{safe_after, AcquireRequest, Admission, Lease, Park, ReportRequest, Verdict};
pub use classify::{classify_status, Failure, StatusVerdict};
use retry_after::park_window;

pub trait Clock {
    fn now_ms(&self) -> u64;
}

/// The routing Durable Object of one tenant/provider.
#[allow(async_fn_in_trait)]
pub trait RoutingState {
    /// The one round trip before a candidate is tried: breaker admission and key order.
    async fn acquire(&self, provider: &ProviderName, req: AcquireRequest) -> Lease;
    async fn report(&self, provider: &ProviderName, req: ReportRequest);
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
pub enum Reply<B> {
    /// A 2xx whose body is ready to hand to the caller.
    Success {
        status: u16,
        body: B,
    },
    /// A non-2xx; `text` is the provider's error body (for pass-through and the log only).
    Status {
        status: u16,
        retry_after: Option<String>,
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
    /// The caller went away; nothing is held against the key or model.
    Cancelled,
    /// Never sent: the candidate cannot serve this kind of request.
    Unsupported,
}

#[allow(async_fn_in_trait)]
pub trait Upstream {
    type Body;
    async fn send(&self, call: Call<'_>) -> Reply<Self::Body>;
}

/// One key tried inside one candidate, for the log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTry {
    pub key_id: String,
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
}

/// The report still owed for the candidate that served: non-streamed answers settle it at once,
/// streamed ones when the stream ends (a failure after the first byte still counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    pub provider: ProviderName,
    pub report: ReportRequest,
}

#[derive(Debug)]
pub enum Ending<B> {
    Served {
        status: u16,
        body: B,
        /// Candidates that failed before this one.
        depth: usize,
        settlement: Settlement,
    },
    /// A request-caused 4xx: the provider's status and message, unchanged.
    Refused(ApiError),
    Exhausted,
    Cancelled,
}

#[derive(Debug)]
pub struct Outcome<B> {
    pub ending: Ending<B>,
    pub attempts: Vec<CandidateAttempt>,
}

impl<B> Outcome<B> {
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
        })
        .collect();
    let mut err = ApiError::new(
        502,
        ErrorType::ApiError,
        "upstream_exhausted",
        format!("All {} routing candidates failed.", attempts.len()),
    );
    err.attempts = Some(attempts);
    err
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
}

/// How one candidate ended inside the loop.
enum CandidateEnd<B> {
    Served {
        status: u16,
        body: B,
    },
    Refused(ApiError),
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
    pub async fn run(&self, chain: &[Candidate<'_>]) -> Outcome<U::Body> {
        let started = self.clock.now_ms();
        let mut attempts: Vec<CandidateAttempt> = Vec::with_capacity(chain.len());
        for candidate in chain {
            let mut attempt = CandidateAttempt {
                provider: candidate.provider.name.to_string(),
                model: candidate.model.id.to_string(),
                failure: None,
                status: None,
                tries: Vec::new(),
            };
            if self.remaining(started) == 0 {
                attempt.failure = Some(Failure::DeadlineExceeded);
                attempts.push(attempt);
                continue;
            }
            let lease = self
                .state
                .acquire(
                    &candidate.provider.name,
                    acquire_request(candidate, &self.limits),
                )
                .await;
            let probe = match lease.admission {
                Admission::Skip { .. } => {
                    attempt.failure = Some(Failure::BreakerOpen);
                    attempts.push(attempt);
                    continue;
                }
                Admission::Probe { token } => Some(token),
                Admission::Pass => None,
            };
            let mut parks = Vec::new();
            let end = self
                .try_keys(candidate, &lease.keys, started, &mut attempt, &mut parks)
                .await;
            let mut report = ReportRequest {
                model: candidate.model.id.to_string(),
                parks,
                verdict: Verdict::Neutral,
                probe,
                breaker: self.limits.breaker,
            };
            match end {
                CandidateEnd::Served { status, body } => {
                    report.verdict = Verdict::Success;
                    let depth = attempts.len();
                    attempts.push(attempt);
                    let settlement = Settlement {
                        provider: candidate.provider.name.clone(),
                        report,
                    };
                    return Outcome {
                        ending: Ending::Served {
                            status,
                            body,
                            depth,
                            settlement,
                        },
                        attempts,
                    };
                }
                CandidateEnd::Failed { failure, status } => {
                    if failure.counts_toward_breaker() {
                        report.verdict = Verdict::Failure {
                            reason: failure.as_str().to_owned(),
                        };
                    }
                    self.send_report(&candidate.provider.name, report).await;
                    attempt.failure = Some(failure);
                    attempt.status = status;
                    attempts.push(attempt);
                }
                CandidateEnd::Refused(err) => {
                    self.send_report(&candidate.provider.name, report).await;
                    attempts.push(attempt);
                    return Outcome {
                        ending: Ending::Refused(err),
                        attempts,
                    };
                }
                CandidateEnd::Cancelled => {
                    self.send_report(&candidate.provider.name, report).await;
                    attempts.push(attempt);
                    return Outcome {
                        ending: Ending::Cancelled,
                        attempts,
                    };
                }
            }
        }
        Outcome {
            ending: Ending::Exhausted,
            attempts,
        }
    }

    /// Key rotation inside one candidate: a 429 or 401/403 moves to the next key of the same
    /// provider; only when the pool is used up does the candidate fail.
    async fn try_keys(
        &self,
        candidate: &Candidate<'_>,
        keys: &[String],
        started: u64,
        attempt: &mut CandidateAttempt,
        parks: &mut Vec<Park>,
    ) -> CandidateEnd<U::Body> {
        let mut last = (Failure::DeadlineExceeded, None);
        for key in keys.iter().filter_map(|id| candidate.provider.key(id)) {
            let remaining = self.remaining(started);
            if remaining == 0 {
                break;
            }
            let call = Call {
                provider: candidate.provider,
                model: candidate.model,
                key,
                timeout_ms: remaining.min(u64::from(candidate.provider.timeout_ms)),
            };
            let t0 = self.clock.now_ms();
            let reply = self.upstream.send(call).await;
            let now = self.clock.now_ms();
            let mut tried = KeyTry {
                key_id: key.id.clone(),
                status: None,
                failure: None,
                error: None,
                ms: now.saturating_sub(t0),
            };
            let step = match reply {
                Reply::Success { status, body } => {
                    tried.status = Some(status);
                    attempt.tries.push(tried);
                    return CandidateEnd::Served { status, body };
                }
                Reply::Cancelled => {
                    attempt.tries.push(tried);
                    return CandidateEnd::Cancelled;
                }
                Reply::Status {
                    status,
                    retry_after,
                    text,
                } => {
                    tried.status = Some(status);
                    let verdict = classify_status(status);
                    if let StatusVerdict::NextKey(Failure::RateLimit) = verdict {
                        let max = self.limits.max_park_ms;
                        if let Some(ms) = retry_after.and_then(|v| park_window(&v, now, max)) {
                            let until = safe_after(now, ms);
                            parks.push(Park {
                                key: key.id.clone(),
                                until,
                            });
                        }
                    }
                    let end = match verdict {
                        StatusVerdict::RequestCaused => {
                            Some(CandidateEnd::Refused(passthrough_error(status, &text)))
                        }
                        _ => None,
                    };
                    tried.error = Some(text);
                    if let Some(end) = end {
                        attempt.tries.push(tried);
                        return end;
                    }
                    verdict
                }
                Reply::Timeout => StatusVerdict::NextCandidate(Failure::Timeout),
                Reply::Unsupported => StatusVerdict::NextCandidate(Failure::Unsupported),
                Reply::Network(detail) => {
                    tried.error = Some(detail);
                    StatusVerdict::NextCandidate(Failure::Network)
                }
                Reply::Broken { status, detail } => {
                    tried.status = Some(status);
                    tried.error = Some(detail);
                    StatusVerdict::NextCandidate(Failure::Server)
                }
            };
            let (failure, next_key) = match step {
                StatusVerdict::NextKey(f) => (f, true),
                StatusVerdict::NextCandidate(f) => (f, false),
                // Both handled above; kept total so a new verdict cannot slip through silently.
                StatusVerdict::Success | StatusVerdict::RequestCaused => (Failure::Server, false),
            };
            tried.failure = Some(failure);
            last = (failure, tried.status);
            attempt.tries.push(tried);
            if !next_key {
                break;
            }
        }
        CandidateEnd::Failed {
            failure: last.0,
            status: last.1,
        }
    }

    fn remaining(&self, started: u64) -> u64 {
        let elapsed = self.clock.now_ms().saturating_sub(started);
        self.limits.budget_ms.saturating_sub(elapsed)
    }

    async fn send_report(&self, provider: &ProviderName, report: ReportRequest) {
        let provider = provider.clone();
        settle(self.state, Settlement { provider, report }).await;
    }
}

/// Sends the served candidate's report, if it would change anything.
pub async fn settle<S: RoutingState>(state: &S, settlement: Settlement) {
    if settlement.report.changes_anything() {
        state.report(&settlement.provider, settlement.report).await;
    }
}

fn acquire_request(candidate: &Candidate<'_>, limits: &Limits) -> AcquireRequest {
    AcquireRequest {
        model: candidate.model.id.to_string(),
        keys: candidate.provider.key_ids(),
        strategy: candidate.provider.key_strategy,
        // A probe cannot outlive the request that carries it.
        probe_timeout_ms: limits.budget_ms,
        // A grant never outlives half an open duration, so none is still live when a breaker
        // that opened after it was issued goes half-open: the probe stays the only request.
        lease_ms: limits.lease_ms.min(limits.breaker.open_duration_ms / 2),
        window_ms: limits.breaker.window_ms,
    }
}
