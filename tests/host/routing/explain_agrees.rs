//! `explain` and the cascade decide with one function (`cascade::precheck::decide`),
//! so over the same routing state at the same instant they agree. Host-tested over the fakes:
//! the routing state fake runs the real `ProviderState`, as the Durable Object does.

use crate::support::fakes::{FakeClock, Script};
use crate::support::world::World;
use cognigate::admin::views::Explanation;
use cognigate::admin::{explain, DryRun, ExplainQuery};
use cognigate::cascade::{Clock, Ending, Run};
use cognigate::config::SortedMap;
use cognigate::routing::stats::routing_snapshot::RoutingSnapshot;

const DOWN: Script = Script::Status(503, None, r#"{"error":{"message":"down"}}"#);
const PARKED: Script = Script::Status(429, Some("120"), r#"{"error":{"message":"slow"}}"#);

/// The dry run of `name` over the fake's routing state as it is now.
fn explain_now(w: &World<'_>, name: &str) -> Explanation {
    let snapshots: SortedMap<String, RoutingSnapshot> = w
        .state
        .providers
        .borrow()
        .iter()
        .map(|(p, st)| (p.clone(), RoutingSnapshot::of(st, None)))
        .collect();
    let dry = DryRun {
        snapshots: &snapshots,
        now_ms: w.clock.now_ms(),
        draw: 0,
        request_budget_ms: 60_000,
    };
    let q = ExplainQuery::parse(Some(&format!("model={name}"))).unwrap();
    explain(&w.cfg, &q, &dry).unwrap()
}

/// Every position explain skips, the cascade skipped for the same reason until the same time,
/// and the first it tries is the one that served.
fn assert_agree(explained: &Explanation, o: &Run<String>) {
    let first_try = explained
        .candidates
        .iter()
        .position(|c| c.decision.as_str() == "try")
        .unwrap();
    for (c, a) in explained.candidates[..first_try].iter().zip(&o.attempts) {
        assert_eq!(c.model, a.model);
        assert_eq!(c.reason.map(|r| r.failure()), a.failure, "{}", c.model);
        assert_eq!(c.until, a.ends_at, "{}", c.model);
    }
    let Ending::Served { .. } = &o.ending else {
        panic!("expected a served answer: {:?}", o.ending)
    };
    let served = o.attempts.last().unwrap();
    assert_eq!(explained.candidates[first_try].model, served.model);
}

fn trip(w: &World<'_>, model: &str) {
    w.upstream.script(model, &[DOWN; 5]);
    for _ in 0..5 {
        w.run(model);
    }
}

#[test]
fn explain_and_the_cascade_agree_that_an_open_breaker_is_skipped_until_its_end() {
    let clock = FakeClock(1_000_000.into());
    let w = World::new(&clock, 1, "failover");
    trip(&w, "m1");
    clock.advance(10);
    let before = w.state.providers.borrow().clone();
    let explained = explain_now(&w, "chain");
    assert_eq!(
        *w.state.providers.borrow(),
        before,
        "explaining changed nothing"
    );
    let first = &explained.candidates[0];
    assert_eq!(
        (first.decision.as_str(), first.reason.map(|r| r.as_str())),
        ("skip", Some("breaker_open"))
    );
    let open = before["p1"].not_closed(clock.now_ms());
    assert_eq!(first.until, open[0].breaker_until, "the breaker's own end");
    assert!(first.until > Some(clock.now_ms()));
    assert_eq!(first.breaker_until, first.until);
    let calls = w.upstream.count();
    let o = w.run("chain");
    assert_agree(&explained, &o);
    assert_eq!(w.upstream.count(), calls + 1, "only m2 was called");
}

#[test]
fn explain_and_the_cascade_agree_that_a_half_open_breaker_lets_one_probe_through() {
    let clock = FakeClock(1_000_000.into());
    let w = World::new(&clock, 1, "failover");
    trip(&w, "m1");
    clock.advance(60_000);
    let explained = explain_now(&w, "chain");
    assert_eq!(
        explained.candidates[0].decision.as_str(),
        "try",
        "this request probes"
    );
    assert_eq!(explained.candidates[0].breaker_until, None);
    // Explaining twice claims no probe: the request after it is still the probe.
    assert_eq!(
        explain_now(&w, "chain").candidates[0].decision.as_str(),
        "try"
    );
    let o = w.run("chain");
    assert_agree(&explained, &o);
    assert_eq!(o.attempts[0].model, "m1");
}

#[test]
fn a_pool_whose_every_key_is_parked_is_explained_as_tried_and_the_cascade_tries_it() {
    let clock = FakeClock(1_000_000.into());
    let w = World::new(&clock, 2, "failover");
    w.upstream.script("m1", &[PARKED, PARKED]);
    w.run("m1");
    let explained = explain_now(&w, "chain");
    let first = &explained.candidates[0];
    let state = w.state.providers.borrow()["p1"].clone();
    let p1 = cognigate::config::ProviderName::parse("p1").unwrap();
    let soonest = w.cfg.providers[&p1]
        .key_ids()
        .iter()
        .filter_map(|k| state.parked_until(k.as_str()))
        .min();
    assert!(soonest > Some(clock.now_ms()), "both keys parked");
    assert_eq!(
        (
            first.decision.as_str(),
            first.reason.map(|r| r.as_str()),
            first.until
        ),
        ("try", Some("keys_parked"), soonest)
    );
    let calls = w.upstream.count();
    let o = w.run("chain");
    assert_agree(&explained, &o);
    assert_eq!(w.upstream.count(), calls + 1, "the parked pool was called");
}
