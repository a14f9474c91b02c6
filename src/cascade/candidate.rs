//! One chain position: admission, its tries (one, or more with `retry`), and the reports.

use super::context_window::Fit;
use super::precheck::{decide, Check, Decision, Reason};
use super::retry::{after, backoff_ms, is_transient};
use super::{
    CandidateAttempt, CandidateEnd, Cascade, Clock, Failure, Limits, OwedReport, RoutingState,
    Upstream,
};
use crate::api::ApiError;
use crate::config::KeyStrategy;
use crate::health::headroom::Headrooms;
use crate::health::{AcquireRequest, Gate, Park, ReportRequest, Verdict};
use crate::routing::stats::isolate_stats::ProviderStats;
use crate::routing::Candidate;

/// How a chain position ended.
pub(super) enum Position<B> {
    Served {
        status: u16,
        body: B,
        owed_report: OwedReport,
    },
    RequestCaused(ApiError),
    Cancelled,
    /// Moves down the chain; `costs_depth` is false for a candidate skipped before admission
    /// (`context_window`), which did not fail as a provider.
    Failed {
        costs_depth: bool,
    },
}

impl<S: RoutingState, U: Upstream, C: Clock> Cascade<'_, S, U, C> {
    pub(super) async fn position(
        &self,
        candidate: &Candidate<'_>,
        started: u64,
        attempts: &mut Vec<CandidateAttempt>,
    ) -> Position<U::Body> {
        let policy = candidate.provider.resilience.retry;
        // Before admission (`precheck`): a candidate the request itself rules out (a surface its
        // family cannot serve, a prompt its window cannot hold) costs no call and takes no probe.
        let check = Check {
            supported: self.upstream.supports(candidate.provider),
            fit: self.upstream.fit(candidate.model),
            admission: None,
            parked_until: None,
        };
        let truncated = match check.fit {
            Fit::Truncated { dropped } => Some(dropped),
            Fit::Fits | Fit::TooLarge => None,
        };
        if let Decision::Skip { reason, .. } = decide(&check, self.clock.now_ms()) {
            let retry = (policy.max_retries > 0 && reason == Reason::Capability).then_some(0);
            let mut attempt = CandidateAttempt::new(candidate, retry);
            attempt.failure = Some(reason.failure());
            attempts.push(attempt);
            // A window too small says nothing of the provider and costs no depth; a family that
            // cannot serve the surface moves the request down the chain like a failure.
            return Position::Failed {
                costs_depth: reason == Reason::Capability,
            };
        }
        let mut retry = 0u32;
        let mut failed_key: Option<String> = None;
        loop {
            let mut attempt =
                CandidateAttempt::new(candidate, (policy.max_retries > 0).then_some(retry));
            attempt.truncated = truncated;
            if self.remaining(started) == 0 {
                attempt.failure = Some(Failure::DeadlineExceeded);
                attempts.push(attempt);
                return Position::Failed { costs_depth: true };
            }
            let lease = self
                .state
                .acquire(
                    &candidate.provider.name,
                    acquire_request(candidate, &self.limits),
                )
                .await;
            let admitted = Check {
                admission: Some(lease.admission),
                ..check
            };
            match decide(&admitted, self.clock.now_ms()) {
                // After a failed try, an open breaker stops the retries at once: that try's
                // entry already says how the candidate failed.
                Decision::Skip { .. } if retry > 0 => {
                    return Position::Failed { costs_depth: true }
                }
                Decision::Skip { reason, until } => {
                    attempt.failure = Some(reason.failure());
                    attempt.ends_at = until;
                    attempts.push(attempt);
                    return Position::Failed { costs_depth: true };
                }
                Decision::Try { .. } => {}
            }
            let probe = match lease.admission {
                Gate::Probe { token } => Some(token),
                Gate::Pass | Gate::Skip { .. } | Gate::Limited { .. } => None,
            };
            let planned = match candidate.provider.key_strategy {
                KeyStrategy::MostRemaining => {
                    let mut rooms = Headrooms::default();
                    let read = &mut |p: &mut ProviderStats| rooms = p.headrooms();
                    self.state.with_stats(&candidate.provider.name, read);
                    rooms.order(&lease.keys, self.clock.now_ms())
                }
                KeyStrategy::RoundRobin | KeyStrategy::Failover => lease.keys,
            };
            let keys = after(&planned, failed_key.as_deref());
            let mut parks = Vec::new();
            let end = self
                .try_keys(candidate, &keys, started, &mut attempt, &mut parks)
                .await;
            let mut report = ReportRequest {
                model: candidate.model.id.clone(),
                parks,
                verdict: Verdict::Neutral,
                probe,
                breaker: self.limits.breaker,
                scheduled: None,
            };
            let provider = &candidate.provider.name;
            match end {
                CandidateEnd::Served { status, body } => {
                    report.verdict = Verdict::Success;
                    attempts.push(attempt);
                    let owed_report = OwedReport {
                        provider: provider.clone(),
                        report,
                    };
                    return Position::Served {
                        status,
                        body,
                        owed_report,
                    };
                }
                CandidateEnd::Failed { failure, status } => {
                    if failure.counts_toward_breaker() {
                        report.verdict = Verdict::Failure {
                            reason: failure.as_str().to_owned(),
                        };
                    }
                    attempt.ends_at = pool_parked_until(&attempt, &report.parks);
                    self.send_report(provider, report).await;
                    attempt.failure = Some(failure);
                    attempt.status = status;
                    failed_key = attempt.tries.last().map(|t| t.key_id.clone());
                    attempts.push(attempt);
                    let next = retry.saturating_add(1);
                    let delay = (retry < policy.max_retries && is_transient(failure))
                        .then(|| backoff_ms(&policy, next, self.clock.random()))
                        // Never past the budget: a retry that could not start is not waited for.
                        .filter(|ms| *ms < self.remaining(started));
                    let Some(ms) = delay else {
                        return Position::Failed { costs_depth: true };
                    };
                    self.clock.sleep(ms).await;
                    retry = next;
                }
                CandidateEnd::RequestCaused(err) => {
                    self.send_report(provider, report).await;
                    attempts.push(attempt);
                    return Position::RequestCaused(err);
                }
                CandidateEnd::Cancelled => {
                    self.send_report(provider, report).await;
                    attempts.push(attempt);
                    return Position::Cancelled;
                }
            }
        }
    }
}

/// A rate-limited try whose every key was parked by it has a known end: the soonest park.
fn pool_parked_until(attempt: &CandidateAttempt, parks: &[Park]) -> Option<u64> {
    let all_parked = !attempt.tries.is_empty()
        && attempt
            .tries
            .iter()
            .all(|t| parks.iter().any(|p| p.key.as_str() == t.key_id));
    all_parked
        .then(|| parks.iter().map(|p| p.until).min())
        .flatten()
}

pub fn acquire_request(candidate: &Candidate<'_>, limits: &Limits) -> AcquireRequest {
    AcquireRequest {
        model: candidate.model.id.clone(),
        keys: candidate.provider.key_ids(),
        strategy: candidate.provider.key_strategy,
        // A probe cannot outlive the request that carries it.
        probe_timeout_ms: limits.budget_ms,
        // A grant never outlives half an open duration, so none is still live when a breaker
        // that opened after it was issued goes half-open: the probe stays the only request.
        lease_ms: limits.lease_ms.min(
            limits
                .breaker
                .open_durations_ms
                .shortest(limits.breaker.open_duration_ms)
                / 2,
        ),
        window_ms: limits.breaker.window_ms,
        rpm: candidate.provider.resilience.rpm,
        leave_probe: limits.degraded,
    }
}
