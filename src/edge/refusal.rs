//! The refusal fallback at the edge: the request's opt-out header, and the answers
//! billed beside the one the caller gets (`usage::billed`). The decisions are `cascade::refusal`'s.

use super::http::{header, CallerRequest};
use super::upstream::UpstreamBody;
use crate::cascade::{CandidateAttempt, RefusalPolicy};
use crate::config::{OnRefusal, TenantConfig};
use crate::usage::estimate::answer_tokens;
use crate::usage::Billed;

/// The requested name's `on_refusal`, unless the request sent `X-CogniGate-Policy-Fallback: off`
/// (any other value is ignored).
pub(super) fn policy(req: &CallerRequest, on_refusal: OnRefusal) -> RefusalPolicy {
    let off = header(req, "x-cognigate-policy-fallback")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("off"));
    RefusalPolicy::of(on_refusal, off)
}

/// Each answer billed beside the served one, at the model of its attempt: its reported usage, or
/// the estimate (an answer is never free for want of a report).
pub(super) fn billed<'c>(
    cfg: &'c TenantConfig,
    attempts: &[CandidateAttempt],
    answers: Vec<(usize, UpstreamBody)>,
    prompt_estimate: u64,
) -> Vec<Billed<'c>> {
    answers
        .into_iter()
        .filter_map(|(at, body)| {
            let model = cfg.models.get(attempts.get(at)?.model.as_str())?;
            match body {
                UpstreamBody::Full { usage, bytes, .. } => {
                    Some((model, answer_tokens(usage, prompt_estimate, &bytes)))
                }
                // Never held: a stream is not read for a refusal.
                UpstreamBody::Stream(_) => None,
            }
        })
        .collect()
}
