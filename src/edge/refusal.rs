//! The refusal fallback at the edge: the answers billed beside the one the caller gets
//! (`usage::billed`). The decisions are `cascade::refusal`'s.

use super::upstream::UpstreamBody;
use crate::cascade::CandidateAttempt;
use crate::config::TenantConfig;
use crate::usage::estimate::answer_tokens;
use crate::usage::Billed;

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
