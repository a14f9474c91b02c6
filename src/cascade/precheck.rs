//! Whether a candidate is tried or skipped, decided from what is known before any
//! upstream call. One pure function, read by the cascade (for its own request: `candidate.rs`)
//! and by `explain` (over a read of the routing objects), so the explanation of a route cannot
//! drift from what a request does.
//!
//! The checks run in the order the cascade meets them: what the request itself rules out
//! (the provider family cannot serve its surface, its prompt does not fit the window), then the
//! routing object's admission (a used-up `rpm`, an open breaker). A pool every key of which is
//! parked is still tried, soonest-free key first (`KeyPool::plan`: a window is an estimate), so
//! it is a `try` that names `keys_parked` and when the first key is free.

use super::context_window::Fit;
use super::Failure;
use crate::health::Gate;
use serde::Serialize;

/// Why a candidate is skipped (or, for `KeysParked`, what holds back the one tried), named as
/// `explain` answers it: `keys_parked` also marks a `try` whose every key is parked (the pool is
/// tried anyway, soonest-free key first).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    BreakerOpen,
    KeysParked,
    ContextWindow,
    LocalRateLimit,
    Capability,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BreakerOpen => "breaker_open",
            Self::KeysParked => "keys_parked",
            Self::ContextWindow => "context_window",
            Self::LocalRateLimit => "local_rate_limit",
            Self::Capability => "capability",
        }
    }
}

pub use SkipReason as Reason;

impl Reason {
    /// How a skip for this reason is logged and answered in a 502's `attempts`.
    pub fn failure(self) -> Failure {
        match self {
            Self::BreakerOpen => Failure::BreakerOpen,
            Self::ContextWindow => Failure::ContextWindow,
            Self::LocalRateLimit => Failure::LocalRateLimit,
            Self::Capability => Failure::Unsupported,
            // Never a skip: a parked pool is tried, and fails as a rate limit if it fails.
            Self::KeysParked => Failure::RateLimit,
        }
    }
}

/// The decision for one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Sent upstream. `parked_until`: every key of its pool is parked until then (tried anyway).
    Try { parked_until: Option<u64> },
    /// Never sent. `until`: when the reason ends, if known (a probe in flight has no end).
    Skip { reason: Reason, until: Option<u64> },
}

impl Decision {
    pub fn reason(self) -> Option<Reason> {
        match self {
            Self::Try { parked_until } => parked_until.map(|_| Reason::KeysParked),
            Self::Skip { reason, .. } => Some(reason),
        }
    }

    pub fn until(self) -> Option<u64> {
        match self {
            Self::Try { parked_until } => parked_until,
            Self::Skip { until, .. } => until,
        }
    }
}

/// What is known of one candidate before it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// The candidate's provider family can serve the request's surface.
    pub supported: bool,
    pub fit: Fit,
    /// The routing object's admission; `None` while not asked yet (the cascade asks only
    /// after the request's own checks passed, so a skipped candidate takes no probe).
    pub admission: Option<Gate>,
    /// The soonest a key of the candidate's pool is free, when every key is parked.
    pub parked_until: Option<u64>,
}

/// The decision at `now_ms` (a park or breaker end already past is no reason).
pub fn decide(check: &Check, now_ms: u64) -> Decision {
    if !check.supported {
        return Decision::Skip {
            reason: Reason::Capability,
            until: None,
        };
    }
    if check.fit == Fit::TooLarge {
        return Decision::Skip {
            reason: Reason::ContextWindow,
            until: None,
        };
    }
    match check.admission {
        Some(Gate::Limited { until }) => Decision::Skip {
            reason: Reason::LocalRateLimit,
            until: Some(until),
        },
        Some(Gate::Skip { until }) => Decision::Skip {
            reason: Reason::BreakerOpen,
            until,
        },
        None | Some(Gate::Pass) | Some(Gate::Probe { .. }) => Decision::Try {
            parked_until: check.parked_until.filter(|u| *u > now_ms),
        },
    }
}

#[cfg(test)]
#[path = "precheck_tests.rs"]
mod tests;
