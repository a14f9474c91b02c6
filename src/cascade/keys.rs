//! Key rotation inside one try of one candidate: a 429 or 401/403 moves to the next key of the
//! same provider; only when the pool is used up does the try fail.

use super::platform_status::{read_status, StatusAnswer};
use super::{
    CandidateAttempt, CandidateEnd, Cascade, Clock, Failure, KeyTry, RoutingState, StatusClass,
    Upstream, UpstreamReply,
};
use crate::api::passthrough_error;
use crate::config::KeyId;
use crate::health::{safe_after, Park};
use crate::routing::stats::isolate_stats::ProviderStats;
use crate::routing::Candidate;

impl<S: RoutingState, U: Upstream, C: Clock> Cascade<'_, S, U, C> {
    pub(super) async fn try_keys(
        &self,
        candidate: &Candidate<'_>,
        keys: &[KeyId],
        started: u64,
        attempt: &mut CandidateAttempt,
        parks: &mut Vec<Park>,
    ) -> CandidateEnd<U::Body> {
        let mut last = (Failure::DeadlineExceeded, None);
        for key in keys
            .iter()
            .filter_map(|id| candidate.provider.key(id.as_str()))
        {
            let remaining = self.remaining(started);
            if remaining == 0 {
                break;
            }
            let call = super::Call {
                provider: candidate.provider,
                model: candidate.model,
                key,
                timeout_ms: remaining.min(u64::from(candidate.provider.timeout_ms)),
            };
            let t0 = self.clock.now_ms();
            let reply = self.upstream.send(call).await;
            let now = self.clock.now_ms();
            // Every answer's quota headers, whatever the key strategy (the ranking reads them too).
            let quota = self.upstream.take_quota_headers();
            let figures = super::quota_headers::read(candidate.provider.kind, &quota, now);
            if !figures.is_empty() {
                let saw = &mut |p: &mut ProviderStats| p.saw(&key.id, &figures, now);
                self.state.with_stats(&candidate.provider.name, saw);
            }
            let mut tried = KeyTry {
                key_id: key.id.clone(),
                at: t0,
                status: None,
                failure: None,
                error: None,
                ms: now.saturating_sub(t0),
            };
            let step = match reply {
                UpstreamReply::Success { status, body } => {
                    tried.status = Some(status);
                    attempt.tries.push(tried);
                    return CandidateEnd::Served { status, body };
                }
                UpstreamReply::Cancelled => {
                    attempt.tries.push(tried);
                    return CandidateEnd::Cancelled;
                }
                UpstreamReply::Status {
                    status,
                    retry_after,
                    headers,
                    text,
                } => {
                    tried.status = Some(status);
                    let resilience = &candidate.provider.resilience;
                    let max = resilience.max_park_ms(self.limits.max_park_ms);
                    let answer = StatusAnswer {
                        status,
                        retry_after: retry_after.as_deref(),
                        headers: &headers,
                        text: &text,
                    };
                    let (verdict, parked) = read_status(candidate.provider, &answer, now, max);
                    let park_ms = match verdict {
                        StatusClass::NextKey(Failure::RateLimit) => parked,
                        // Benched credentials: a refused key sits out like a rate-limited one.
                        StatusClass::NextKey(Failure::Auth) => {
                            Some(resilience.auth_cooldown_ms.min(max)).filter(|ms| *ms > 0)
                        }
                        _ => None,
                    };
                    if let Some(ms) = park_ms {
                        parks.push(Park {
                            key: KeyId::new(key.id.as_str()),
                            until: safe_after(now, ms),
                        });
                    }
                    if verdict == StatusClass::RequestCaused {
                        let end = CandidateEnd::RequestCaused(passthrough_error(status, &text));
                        tried.error = Some(text);
                        attempt.tries.push(tried);
                        return end;
                    }
                    tried.error = Some(text);
                    verdict
                }
                UpstreamReply::Timeout => StatusClass::NextCandidate(Failure::Timeout),
                UpstreamReply::Unsupported => StatusClass::NextCandidate(Failure::Unsupported),
                UpstreamReply::Network(detail) => {
                    tried.error = Some(detail);
                    StatusClass::NextCandidate(Failure::Network)
                }
                UpstreamReply::Broken { status, detail } => {
                    tried.status = Some(status);
                    tried.error = Some(detail);
                    StatusClass::NextCandidate(Failure::Server)
                }
                UpstreamReply::Oversized { status } => {
                    tried.status = Some(status);
                    tried.error = Some(format!(
                        "body larger than {} bytes",
                        super::body_limit::MAX_SUCCESS_BODY
                    ));
                    StatusClass::NextCandidate(Failure::Oversized)
                }
            };
            let (failure, next_key) = match step {
                StatusClass::NextKey(f) => (f, true),
                StatusClass::NextCandidate(f) => (f, false),
                // Both handled above; kept total so a new verdict cannot slip through silently.
                StatusClass::Success | StatusClass::RequestCaused => (Failure::Server, false),
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
}
