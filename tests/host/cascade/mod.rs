//! The cascade over fake ports with an injected clock: keys, failures, retries, refusals.

mod failures;
mod keys;
mod park_lengths;
mod refusals;
mod retries;

use crate::support::fakes::Script;
use cognigate::cascade::{Ending, Failure, Run};

fn served(o: &Run<String>) -> (String, usize) {
    match &o.ending {
        Ending::Served { body, depth, .. } => (body.clone(), *depth),
        other => panic!("expected a served answer, got {other:?}"),
    }
}

fn failures(o: &Run<String>) -> Vec<(String, Option<Failure>, Option<u16>)> {
    o.attempts
        .iter()
        .map(|a| (a.model.clone(), a.failure, a.status))
        .collect()
}

const RATE_LIMITED: Script = Script::Status(429, None, r#"{"error":{"message":"slow down"}}"#);
