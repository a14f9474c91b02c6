//! One tenant over fake ports with an injected clock: the cascade as the host tests drive it.

use super::fakes::{tenant, FakeClock, FakeState, FakeUpstream};
use cognigate::cascade::{send_owed, Cascade, Ending, Limits, Run};
use cognigate::config::{BreakerSettings, OpenDurations, TenantConfig};
use cognigate::routing::{build_chain, RouteInput};
use futures::executor::block_on;

/// The default limits, strict routing (no grants), the default park clamp.
pub const LIMITS: Limits = Limits {
    budget_ms: 60_000,
    lease_ms: 0,
    max_park_ms: 3_600_000,
    degraded: false,
    breaker: BreakerSettings {
        error_threshold: 5,
        window_ms: 30_000,
        open_duration_ms: 60_000,
        open_durations_ms: OpenDurations::SINGLE,
    },
};

pub struct World<'c> {
    pub cfg: TenantConfig,
    pub clock: &'c FakeClock,
    pub state: FakeState<'c>,
    pub upstream: FakeUpstream<'c>,
}

impl<'c> World<'c> {
    pub fn new(clock: &'c FakeClock, keys: usize, strategy: &str) -> Self {
        Self {
            cfg: tenant(keys, strategy),
            clock,
            state: FakeState::new(clock),
            upstream: FakeUpstream::new(clock),
        }
    }

    pub fn run(&self, name: &str) -> Run<String> {
        self.run_with(name, LIMITS)
    }

    pub fn run_with(&self, name: &str, limits: Limits) -> Run<String> {
        let chain = build_chain(&self.cfg, name, &RouteInput::unmeasured())
            .unwrap()
            .candidates;
        let cascade = Cascade {
            state: &self.state,
            upstream: &self.upstream,
            clock: self.clock,
            limits,
        };
        let mut outcome = block_on(cascade.run(&chain));
        // As the edge does for a non-streamed answer: settle at once.
        if let Ending::Served { owed_report, .. } = &mut outcome.ending {
            block_on(send_owed(&self.state, owed_report.clone()));
        }
        outcome
    }
}
