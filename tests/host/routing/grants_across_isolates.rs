//! The bound grants keep across isolates, driven on the host: two simulated isolates,
//! each with its own grant book, against one routing state, with an injected clock. Within one
//! isolate every rule is exact (its own report ends its grants); another isolate's news reaches
//! an isolate holding a grant within the lease or its allowance, whichever comes first; a
//! half-open probe is never granted; a grant is issued only for a quiet candidate.

use cognigate::config::{BreakerSettings, KeyStrategy, ModelId, OpenDurations};
use cognigate::health::grant::GRANT_BLOCK;
use cognigate::health::{
    AcquireRequest, Gate, LocalAdmission, ProviderGrants, ProviderState, ReportRequest, Verdict,
};

const BREAKER: BreakerSettings = BreakerSettings {
    error_threshold: 3,
    window_ms: 30_000,
    open_duration_ms: 60_000,
    open_durations_ms: OpenDurations::SINGLE,
};
const LEASE_MS: u64 = 1_000;

/// One isolate: its grant book, and what it sent upstream.
#[derive(Default)]
struct Isolate {
    book: ProviderGrants,
    upstream_calls: u64,
    object_calls: u64,
}

fn acquire_request() -> AcquireRequest {
    AcquireRequest {
        model: m(),
        keys: vec!["k1".into(), "k2".into()],
        strategy: KeyStrategy::RoundRobin,
        probe_timeout_ms: 60_000,
        lease_ms: LEASE_MS,
        window_ms: BREAKER.window_ms,
        rpm: None,
        leave_probe: false,
    }
}

impl Isolate {
    /// One request, as `RoutingClient::acquire` decides it: locally when a grant or skip is
    /// live, else one round trip to the object (installing what it grants). True if it was
    /// admitted (and so called upstream).
    fn request(&mut self, object: &mut ProviderState, now: u64) -> (bool, Option<u64>) {
        let req = acquire_request();
        match self.book.take(&req.model, &req.keys, req.strategy, now) {
            Some(LocalAdmission::Admit(_)) => {
                self.upstream_calls += 1;
                return (true, None);
            }
            Some(LocalAdmission::Skip { .. }) => return (false, None),
            None => {}
        }
        self.object_calls += 1;
        let ticket = self.book.ticket();
        let lease = object.acquire(&req, now);
        if let Some(grant) = lease.grant {
            self.book.install(&m(), grant, ticket);
        }
        match lease.admission {
            Gate::Skip { until: Some(until) } => {
                self.book.install_skip(&m(), until, now, LEASE_MS, ticket);
                (false, None)
            }
            Gate::Pass => {
                self.upstream_calls += 1;
                (true, None)
            }
            Gate::Probe { token } => {
                self.upstream_calls += 1;
                (true, Some(token))
            }
            _ => (false, None),
        }
    }

    /// A counted failure, reported as the cascade reports it: the isolate's grants end.
    fn report_failure(&mut self, object: &mut ProviderState, probe: Option<u64>, now: u64) {
        self.book.news();
        self.object_calls += 1;
        object.report(
            &ReportRequest {
                model: m(),
                parks: vec![],
                verdict: Verdict::Failure {
                    reason: "server".into(),
                },
                probe,
                breaker: BREAKER,
                scheduled: None,
            },
            now,
        );
        self.book.news();
    }
}

fn m() -> ModelId {
    ModelId::parse("m").unwrap()
}

#[test]
fn after_the_breaker_opens_no_isolate_sends_more_than_its_remaining_allowance_or_lease() {
    let mut object = ProviderState::default();
    let (mut a, mut b) = (Isolate::default(), Isolate::default());
    // Both isolates hold a grant for the quiet candidate. B's first request was admitted by
    // the object itself; the next nine used 9 of its grant's allowance.
    assert!(a.request(&mut object, 0).0);
    for t in 0..10 {
        assert!(b.request(&mut object, t).0);
    }
    assert_eq!(
        b.object_calls, 1,
        "B asked once and admitted the rest itself"
    );
    // The upstream fails: A's three failures open the breaker at t = 100.
    for t in [100, 100, 100] {
        a.request(&mut object, t);
        a.report_failure(&mut object, None, t);
    }
    assert!(matches!(
        object.acquire(&acquire_request(), 101).admission,
        Gate::Skip { .. }
    ));
    // A, the isolate that reported, knows at once: not one more upstream call.
    let a_before = a.upstream_calls;
    for t in 101..200 {
        assert!(!a.request(&mut object, t).0);
    }
    assert_eq!(
        a.upstream_calls, a_before,
        "exact within the reporting isolate"
    );
    // B has not heard: it keeps admitting on its grant, but never past the allowance left
    // (64 - 9) nor past its lease.
    let b_before = b.upstream_calls;
    let mut last_admitted_at = 0;
    for t in 101..3_000 {
        if b.request(&mut object, t).0 {
            last_admitted_at = t;
        }
    }
    let overshoot = b.upstream_calls - b_before;
    assert!(
        overshoot <= GRANT_BLOCK - 9,
        "B sent {overshoot}, more than its remaining allowance"
    );
    assert!(
        last_admitted_at < LEASE_MS,
        "B stopped by the end of its lease (last admitted at {last_admitted_at} ms)"
    );
    // Once B asks again it is told to skip, and then skips locally without asking.
    let b_asks = b.object_calls;
    for t in 3_000..3_500 {
        assert!(!b.request(&mut object, t).0);
    }
    assert!(
        b.object_calls - b_asks <= 1,
        "a skip grant spares B a round trip per request"
    );
}

#[test]
fn a_half_open_probe_is_never_granted_so_exactly_one_probe_goes_out_across_isolates() {
    let mut object = ProviderState::default();
    let (mut a, mut b) = (Isolate::default(), Isolate::default());
    for t in [0, 0, 0] {
        a.request(&mut object, t);
        a.report_failure(&mut object, None, t);
    }
    // The open duration passes; both isolates hold skips no longer than their lease.
    let after_open = BREAKER.open_duration_ms + 1;
    let (a_admitted, a_probe) = a.request(&mut object, after_open);
    let (b_admitted, _) = b.request(&mut object, after_open);
    assert!(a_admitted && a_probe.is_some(), "A carries the probe");
    assert!(!b_admitted, "B is skipped while the probe is out");
    // Many more requests from both, while the probe is out: none goes upstream.
    let calls = a.upstream_calls + b.upstream_calls;
    for t in after_open..after_open + 500 {
        assert!(!a.request(&mut object, t).0);
        assert!(!b.request(&mut object, t).0);
    }
    assert_eq!(a.upstream_calls + b.upstream_calls, calls);
}

#[test]
fn a_candidate_with_a_counted_failure_inside_the_window_gets_no_grant() {
    let mut object = ProviderState::default();
    let mut a = Isolate::default();
    a.request(&mut object, 0);
    a.report_failure(&mut object, None, 0);
    let mut b = Isolate::default();
    for t in 1..20 {
        b.request(&mut object, t);
    }
    assert_eq!(b.object_calls, 19, "not quiet: every request asks");
    // Once the failure ages out of the window, grants come back.
    let later = BREAKER.window_ms + 1;
    let mut c = Isolate::default();
    for t in later..later + 20 {
        c.request(&mut object, t);
    }
    assert_eq!(c.object_calls, 1);
}
