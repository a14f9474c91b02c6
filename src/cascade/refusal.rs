//! Refusal fallback: with `on_refusal: fallback`, a non-streamed answer that
//! is a safety refusal (`providers::refusal`) is kept, and the request is sent once more, to the
//! next candidate of the chain that can be asked.
//!
//! - The refusal is a served answer as far as health goes: its candidate's report is a success
//!   (sent before the fallback is tried, so a probe it carried is freed at once), never a failure
//!   toward a breaker.
//! - The fallback is the first later position that makes an upstream call: positions skipped
//!   without one (an open breaker, a used-up `rpm`, a window too small) are passed over as the
//!   cascade always does, costing depth as they always do; the refusing position costs one.
//! - `applied`: the fallback answered, and the caller gets its answer. `unavailable`: no position
//!   was left to ask, the request opted out (`X-CogniGate-Policy-Fallback: off`), or the fallback
//!   refused too, failed, was refused as a request-caused 4xx or the caller went away: the caller
//!   gets the original refusal.
//! - Every answer an upstream generated is billed by it, so the outcome hands the edge the ones
//!   the caller does not get (`RefusalSeen::billed`) to charge with the served one.

use super::candidate::Position;
use super::{
    send_owed, CandidateAttempt, Cascade, Clock, Ending, OwedReport, RoutingState, Upstream,
};
use crate::config::OnRefusal;
use crate::health::Verdict;
use crate::routing::Candidate;

/// What a request does with a refusal: its name's `on_refusal`, and the opt-out header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RefusalPolicy {
    /// A refusal is the answer, and answers are not even read for one.
    #[default]
    Answer,
    /// `on_refusal: fallback`.
    Fallback,
    /// `on_refusal: fallback`, and the request sent `X-CogniGate-Policy-Fallback: off`: a refusal
    /// is answered as it is, with `unavailable`.
    OptedOut,
}

impl RefusalPolicy {
    pub fn of(on_refusal: OnRefusal, opted_out: bool) -> Self {
        match (on_refusal, opted_out) {
            (OnRefusal::Answer, _) => Self::Answer,
            (OnRefusal::Fallback, false) => Self::Fallback,
            (OnRefusal::Fallback, true) => Self::OptedOut,
        }
    }

    /// Whether answers are read for a refusal at all: only for a name with `on_refusal: fallback`.
    pub fn watches(self) -> bool {
        self != Self::Answer
    }
}

/// `X-CogniGate-Policy-Fallback`, present only when a refusal was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyFallback {
    Applied,
    Unavailable,
}

impl PolicyFallback {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::Unavailable => "unavailable",
        }
    }

    /// The request log line's `outcome` (in place of `served`), so operators can find refusals.
    pub fn log_outcome(self) -> &'static str {
        match self {
            Self::Applied => "refusal_applied",
            Self::Unavailable => "refusal_unavailable",
        }
    }
}

/// A refusal seen on the way to a served answer.
#[derive(Debug)]
pub struct RefusalSeen<B> {
    pub fallback: PolicyFallback,
    /// The attempt (an index into `Run::attempts`) whose answer the caller gets: the
    /// fallback's when applied, the original refusal's when unavailable.
    pub served: usize,
    /// Answers generated (and billed by their provider) that the caller does not get, each with
    /// its attempt's index: the original refusal when applied, the fallback's own refusal when
    /// it refused too.
    pub billed: Vec<(usize, B)>,
}

impl<B> RefusalSeen<B> {
    /// The attempt that served the caller's answer.
    pub fn served_attempt<'a>(
        &self,
        attempts: &'a [CandidateAttempt],
    ) -> Option<&'a CandidateAttempt> {
        attempts.get(self.served)
    }
}

/// The refusal kept while its fallback is tried.
pub(super) struct Held<B> {
    pub status: u16,
    pub body: B,
    pub depth: usize,
    pub owed_report: OwedReport,
    /// Its attempt's index.
    pub attempt: usize,
}

impl<B> Held<B> {
    fn answer(self, fallback: PolicyFallback, billed: Vec<(usize, B)>) -> Ending<B> {
        Ending::Served {
            status: self.status,
            body: self.body,
            depth: self.depth,
            owed_report: self.owed_report,
            refusal: Some(Box::new(RefusalSeen {
                fallback,
                served: self.attempt,
                billed,
            })),
        }
    }
}

impl OwedReport {
    /// The same settlement once its report has gone: sending it again changes nothing.
    fn spent(&self) -> Self {
        let mut report = self.report.clone();
        report.verdict = Verdict::Neutral;
        report.parks.clear();
        report.probe = None;
        OwedReport {
            provider: self.provider.clone(),
            report,
        }
    }
}

fn mark(attempts: &mut [CandidateAttempt], at: usize) {
    if let Some(a) = attempts.get_mut(at) {
        a.refusal = true;
    }
}

impl<S: RoutingState, U: Upstream, C: Clock> Cascade<'_, S, U, C> {
    /// After `held`, a refusal, was served: the fallback on `rest` (the positions after it), or
    /// the refusal itself.
    pub(super) async fn after_refusal(
        &self,
        mut held: Held<U::Body>,
        rest: &[Candidate<'_>],
        policy: RefusalPolicy,
        started: u64,
        attempts: &mut Vec<CandidateAttempt>,
    ) -> Ending<U::Body> {
        mark(attempts, held.attempt);
        if policy != RefusalPolicy::Fallback {
            return held.answer(PolicyFallback::Unavailable, Vec::new());
        }
        let spent = held.owed_report.spent();
        send_owed(self.state, std::mem::replace(&mut held.owed_report, spent)).await;
        let mut depth = held.depth.saturating_add(1);
        for candidate in rest {
            let before = attempts.len();
            match self.position(candidate, started, attempts).await {
                Position::Served {
                    status,
                    body,
                    owed_report,
                } => {
                    let at = attempts.len().saturating_sub(1);
                    if self.upstream.is_refusal(&body) {
                        mark(attempts, at);
                        send_owed(self.state, owed_report).await;
                        return held.answer(PolicyFallback::Unavailable, vec![(at, body)]);
                    }
                    return Ending::Served {
                        status,
                        body,
                        depth,
                        owed_report,
                        refusal: Some(Box::new(RefusalSeen {
                            fallback: PolicyFallback::Applied,
                            served: at,
                            billed: vec![(held.attempt, held.body)],
                        })),
                    };
                }
                // Skipped without a call: not asked, so the next position is the fallback.
                Position::Failed { costs_depth }
                    if attempts.iter().skip(before).all(|a| a.tries.is_empty()) =>
                {
                    depth = depth.saturating_add(usize::from(costs_depth));
                }
                // Asked and failed, refused the request, or the caller went away: the one
                // fallback is spent and the refusal stands.
                _ => break,
            }
        }
        held.answer(PolicyFallback::Unavailable, Vec::new())
    }
}
