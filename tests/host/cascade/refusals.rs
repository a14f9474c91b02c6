//! Refusal fallback over fake ports: a safety refusal with
//! `on_refusal: fallback` is sent once more to the next candidate of the chain.

use crate::support::fakes::{refusal_body, FakeClock, Script};
use crate::support::world::{World, LIMITS};
use cognigate::cascade::{
    send_owed, Cascade, Ending, PolicyFallback, RefusalPolicy, RefusalSeen, Run,
};
use cognigate::governance::settled::{Seen, SettledIds};
use cognigate::health::Verdict;
use cognigate::routing::{build_chain, RouteInput};
use cognigate::usage::{PendingUsage, TokenCounts, UsageSource};
use futures::executor::block_on;

/// `name` through the cascade with `policy`, settled as the edge settles a whole answer.
fn run(w: &World, name: &str, policy: RefusalPolicy) -> Run<String> {
    let route = build_chain(&w.cfg, name, &RouteInput::unmeasured()).unwrap();
    let cascade = Cascade {
        state: &w.state,
        upstream: &w.upstream,
        clock: w.clock,
        limits: LIMITS,
    };
    let chain = &route.candidates;
    let mut outcome = block_on(cascade.run_with(chain, policy, route.refusal_only));
    if let Ending::Served { owed_report, .. } = &mut outcome.ending {
        block_on(send_owed(&w.state, owed_report.clone()));
    }
    outcome
}

/// The served body, its depth, and the refusal seen on the way (`None`: none).
fn served(o: &Run<String>) -> (&str, usize, Option<&RefusalSeen<String>>) {
    match &o.ending {
        Ending::Served {
            body,
            depth,
            refusal,
            ..
        } => (body.as_str(), *depth, refusal.as_deref()),
        other => panic!("expected a served answer, got {other:?}"),
    }
}

fn fallback(o: &Run<String>) -> PolicyFallback {
    served(o).2.expect("a refusal was seen").fallback
}

/// The attempts' models and whether each answered with a refusal.
fn refusals(o: &Run<String>) -> Vec<(&str, bool)> {
    o.attempts
        .iter()
        .map(|a| (a.model.as_str(), a.refusal))
        .collect()
}

const FALLBACK: RefusalPolicy = RefusalPolicy::Fallback;

#[test]
fn a_refusal_then_a_normal_answer_serves_the_next_candidate_with_applied_at_depth_1() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    w.upstream.script("m1", &[Script::Refusal]);
    let o = run(&w, "chain", FALLBACK);
    let (body, depth, seen) = served(&o);
    assert_eq!((body, depth), ("answer from m2", 1));
    let seen = seen.unwrap();
    assert_eq!(seen.fallback, PolicyFallback::Applied);
    assert_eq!(seen.served_attempt(&o.attempts).unwrap().model, "m2");
    assert_eq!(
        seen.billed,
        [(0, refusal_body("m1"))],
        "the refusal is billed"
    );
    assert_eq!(refusals(&o), [("m1", true), ("m2", false)]);
    assert_eq!(o.attempts[0].failure, None, "a refusal is no failure");
    assert_eq!(w.upstream.count(), 2);
}

#[test]
fn with_the_opt_out_the_refusal_is_the_answer_with_unavailable_and_no_second_call() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    w.upstream.script("m1", &[Script::Refusal]);
    let o = run(&w, "chain", RefusalPolicy::OptedOut);
    assert_eq!(served(&o).0, refusal_body("m1"));
    assert_eq!(fallback(&o), PolicyFallback::Unavailable);
    assert!(served(&o).2.unwrap().billed.is_empty());
    assert_eq!(w.upstream.count(), 1);
}

#[test]
fn with_no_next_candidate_the_refusal_is_the_answer_with_unavailable() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    w.upstream.script("m1", &[Script::Refusal]);
    let o = run(&w, "m1", FALLBACK);
    assert_eq!(served(&o).0, refusal_body("m1"));
    assert_eq!(served(&o).1, 0);
    assert_eq!(fallback(&o), PolicyFallback::Unavailable);
    assert_eq!(w.upstream.count(), 1);
}

#[test]
fn a_fallback_that_refuses_too_leaves_the_original_refusal_with_unavailable_and_both_billed() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    w.upstream.script("m1", &[Script::Refusal]);
    w.upstream.script("m2", &[Script::Refusal]);
    let o = run(&w, "chain", FALLBACK);
    let (body, depth, seen) = served(&o);
    assert_eq!((body, depth), (refusal_body("m1").as_str(), 0));
    let seen = seen.unwrap();
    assert_eq!(seen.fallback, PolicyFallback::Unavailable);
    assert_eq!(seen.served_attempt(&o.attempts).unwrap().model, "m1");
    assert_eq!(seen.billed, [(1, refusal_body("m2"))]);
    assert_eq!(refusals(&o), [("m1", true), ("m2", true)]);
    assert_eq!(w.upstream.count(), 2, "once: m3 is never asked");
}

#[test]
fn a_fallback_that_fails_leaves_the_original_refusal_with_unavailable_and_asks_no_further() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    w.upstream.script("m1", &[Script::Refusal]);
    w.upstream
        .script("m2", &[Script::Status(503, None, "overloaded")]);
    let o = run(&w, "chain", FALLBACK);
    assert_eq!(served(&o).0, refusal_body("m1"));
    assert_eq!(fallback(&o), PolicyFallback::Unavailable);
    assert_eq!(
        served(&o)
            .2
            .unwrap()
            .served_attempt(&o.attempts)
            .unwrap()
            .model,
        "m1"
    );
    assert_eq!(w.upstream.count(), 2);
    // A request-caused 4xx from the fallback is its failure too, not the caller's answer.
    w.upstream.script("m1", &[Script::Refusal]);
    w.upstream
        .script("m2", &[Script::Status(400, None, "bad request")]);
    let o = run(&w, "chain", FALLBACK);
    assert_eq!(served(&o).0, refusal_body("m1"));
    assert_eq!(fallback(&o), PolicyFallback::Unavailable);
}

#[test]
fn a_position_skipped_without_a_call_is_passed_over_and_the_next_one_is_the_fallback() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    // Open m2's breaker.
    for _ in 0..5 {
        w.upstream
            .script("m2", &[Script::Status(500, None, "boom")]);
        run(&w, "m2", RefusalPolicy::Answer);
    }
    w.upstream.script("m1", &[Script::Refusal]);
    let o = run(&w, "chain", FALLBACK);
    let (body, depth, _) = served(&o);
    assert_eq!(body, "answer from m3");
    assert_eq!(
        depth, 2,
        "the refusal and the skipped position each cost one"
    );
    assert_eq!(fallback(&o), PolicyFallback::Applied);
}

#[test]
fn a_refusal_never_counts_toward_a_breaker() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    for policy in [FALLBACK, RefusalPolicy::OptedOut] {
        for _ in 0..6 {
            w.upstream.script("m1", &[Script::Refusal]);
            run(&w, "chain", policy);
        }
    }
    let o = run(&w, "chain", FALLBACK);
    assert_eq!(
        served(&o).0,
        "answer from m1",
        "m1's breaker is still closed"
    );
    assert_eq!(served(&o).2.map(|s| s.fallback), None);
    assert!(w
        .state
        .reports
        .borrow()
        .iter()
        .all(|r| !matches!(r.verdict, Verdict::Failure { .. })));
}

#[test]
fn a_half_open_probe_answered_with_a_refusal_closes_the_breaker_as_a_success() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    for _ in 0..5 {
        w.upstream
            .script("m1", &[Script::Status(500, None, "boom")]);
        run(&w, "m1", RefusalPolicy::Answer);
    }
    clock.advance(LIMITS.breaker.open_duration_ms);
    w.upstream.script("m1", &[Script::Refusal]);
    let o = run(&w, "chain", FALLBACK);
    assert_eq!(fallback(&o), PolicyFallback::Applied);
    let probe =
        w.state.reports.borrow().iter().any(|r| {
            r.model.as_str() == "m1" && r.probe.is_some() && r.verdict == Verdict::Success
        });
    assert!(probe, "the probe is reported a success before the fallback");
    let o = run(&w, "chain", FALLBACK);
    assert_eq!(served(&o).0, "answer from m1", "closed");
}

#[test]
fn without_on_refusal_fallback_a_refusal_is_the_answer_and_is_not_read() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 1, "failover");
    w.upstream.script("m1", &[Script::Refusal]);
    let o = run(&w, "chain", RefusalPolicy::Answer);
    assert_eq!(served(&o).0, refusal_body("m1"));
    assert!(served(&o).2.is_none(), "no header");
    assert_eq!(refusals(&o), [("m1", false)]);
    assert_eq!(w.upstream.count(), 1);
    // `Cascade::run` is the cascade without a refusal policy: the refusal is the answer.
    w.upstream.script("m1", &[Script::Refusal]);
    let o = w.run("chain");
    assert!(served(&o).2.is_none());
}

#[test]
fn both_answers_are_charged_in_one_record_that_the_ledger_settles_once() {
    let clock = FakeClock::default();
    let mut w = World::new(&clock, 1, "failover");
    for (id, price) in [("m1", 1.0), ("m2", 10.0)] {
        w.cfg.models.get_mut(id).unwrap().input_price_per_mtok = price;
    }
    w.upstream.script("m1", &[Script::Refusal]);
    let o = run(&w, "chain", FALLBACK);
    let seen = served(&o).2.unwrap();
    // As the edge charges it: the served answer at its model, each billed one at its own.
    let model_of = |at: usize| &w.cfg.models[o.attempts[at].model.as_str()];
    let tokens = |n: u64| (TokenCounts::new(n, 0, 0), UsageSource::Reported);
    let served_model = model_of(seen.served);
    let also: Vec<_> = seen
        .billed
        .iter()
        .map(|(at, _)| (model_of(*at), tokens(300)))
        .collect();
    let pending = PendingUsage {
        request_id: "req_1".into(),
        tenant: w.cfg.tenant.clone(),
        key_id: "key_1".into(),
        end_user: None,
        requested: "chain".into(),
        generation: 0,
    };
    let alone = pending
        .clone()
        .served(1, served_model, tokens(700))
        .cost_usd
        .unwrap();
    let record = pending.served_with(1, (served_model, tokens(700)), &also);
    assert_eq!(record.served_model.as_ref().unwrap().as_str(), "m2");
    assert_eq!(record.tokens.unwrap().prompt, 1_000);
    // 700 tokens at $10 per million for the answer, 300 at $1 for the refusal.
    assert!((alone - 0.007).abs() < 1e-12, "{alone}");
    assert!(
        (record.cost_usd.unwrap() - 0.0073).abs() < 1e-12,
        "{record:?}"
    );
    let mut ledger = SettledIds::default();
    assert_eq!(ledger.check(&record, 1), Seen::New, "charged once, in full");
    assert_eq!(ledger.check(&record, 2), Seen::Duplicate, "never twice");
}
