//! The order's rules, stage by stage: what each early exit reaches and what it never does, and
//! that every path ends in exactly one request event.

use super::world::{Request, Says, World};
use cognigate::config::policy::KeyPolicy;
use cognigate::governance::refusals::Denial;
use cognigate::request::reply::{Body, Reply};
use cognigate::request::{serve, BodyLimits, Deployed};
use cognigate::surfaces::Surface;
use cognigate::usage::Outcome;
use futures::executor::block_on;

pub(super) const AT: Deployed = Deployed {
    body: BodyLimits {
        bytes: 4_096,
        values: 1_000,
    },
    request_budget_ms: 30_000,
    lease_ms: 0,
    max_park_ms: 60_000,
    debug_counters: false,
};

fn limited() -> KeyPolicy {
    KeyPolicy {
        rpm: Some(100),
        ..KeyPolicy::default()
    }
}

fn send<S>(world: &World, req: &Request) -> Reply<S>
where
    World: cognigate::request::ports::Ports<Stream = S>,
{
    block_on(serve(world, req, (Surface::Chat, "req_1"), &AT))
}

fn header<S>(reply: &Reply<S>, name: &str) -> Option<String> {
    let found = reply.headers.iter().find(|(k, _)| *k == name);
    found.map(|(_, v)| v.clone())
}

#[test]
fn a_forged_key_costs_no_d1_read_and_no_body_read() {
    let world = World::new(KeyPolicy::default());
    let req = Request::chat("sk-cg-forged", "m1");
    let reply = send(&world, &req);
    assert_eq!(reply.status, 401);
    assert_eq!(world.d1_reads.get(), 0);
    assert_eq!(req.body_reads.get(), 0);
    assert!(world.the_event().contains(r#""outcome":"rejected""#));
    assert!(world.counted.borrow().is_empty(), "no tenant: not counted");
}

#[test]
fn a_body_past_its_limit_is_refused_before_any_later_stage() {
    let world = World::new(limited());
    let long = "x".repeat(5_000);
    let req = Request::chat(&world.token, &long);
    let reply = send(&world, &req);
    assert_eq!(reply.status, 413);
    assert_eq!(world.admits.get(), 0);
    assert_eq!(world.lookups.get(), 0);
    assert!(world.sent.borrow().is_empty());
    world.the_event();
}

#[test]
fn an_unknown_name_is_refused_before_admission_so_it_costs_no_rate_limit_slot() {
    let world = World::new(limited());
    let reply = send(&world, &Request::chat(&world.token, "nope"));
    assert_eq!(reply.status, 404);
    assert_eq!(world.admits.get(), 0);
    assert!(world.sent.borrow().is_empty());
    assert!(world.records.borrow().is_empty());
    assert!(world.the_event().contains(r#""outcome":"rejected""#));
}

#[test]
fn a_denied_request_makes_no_cache_lookup_or_upstream_call() {
    let world = World::new(limited());
    world.refuse.set(Some((Denial::KeyRpm, Some(7))));
    let req = Request::chat(&world.token, "m1").with("x-cognigate-cache-ttl", "60");
    let reply = send(&world, &req);
    assert_eq!(reply.status, 429);
    assert_eq!(header(&reply, "retry-after").as_deref(), Some("7"));
    assert_eq!(world.admits.get(), 1);
    assert_eq!(world.lookups.get(), 0, "no cache lookup");
    assert!(world.sent.borrow().is_empty(), "no upstream call");
    assert!(world.records.borrow().is_empty(), "nothing billed");
    assert!(world.the_event().contains(r#""outcome":"limited""#));
    assert_eq!(world.counted.borrow().len(), 1);
}

#[test]
fn a_spent_budget_is_alerted_once_per_scope_and_window() {
    let world = World::new(limited());
    world.refuse.set(Some((Denial::KeyBudget, Some(60))));
    for _ in 0..3 {
        assert_eq!(send(&world, &Request::chat(&world.token, "m1")).status, 402);
    }
    let alerts = world.alerts.borrow();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(alerts[0].starts_with("budget.exceeded "));
}

#[test]
fn a_hit_takes_admission_and_bills_zero() {
    let world = World::new(limited());
    let ask = || Request::chat(&world.token, "m1").with("x-cognigate-cache-ttl", "60");
    let miss = send(&world, &ask());
    assert_eq!(miss.status, 200);
    assert_eq!(header(&miss, "x-cognigate-cache").as_deref(), Some("miss"));
    assert_eq!(world.stored.borrow().len(), 1, "a miss stores its answer");
    let hit = send(&world, &ask());
    assert_eq!(hit.status, 200);
    assert_eq!(header(&hit, "x-cognigate-cache").as_deref(), Some("hit"));
    assert_eq!(header(&hit, "x-cognigate-cost-usd").as_deref(), Some("0"));
    assert_eq!(world.admits.get(), 2, "a hit is admitted like a call");
    assert_eq!(world.sent.borrow().len(), 1, "a hit makes no upstream call");
    let records = world.records.borrow();
    let (record, _) = records.last().unwrap();
    assert!(record.cache_hit);
    assert_eq!(record.cost_usd, Some(0.0));
    assert_eq!(world.request_events().len(), 2);
    assert!(world.request_events()[1].contains(r#""outcome":"cache_hit""#));
}

#[test]
fn a_served_answer_is_billed_once_at_the_model_that_served_it() {
    let world = World::new(KeyPolicy::default());
    world.says("m1", &[Says::Unavailable]);
    let reply = send(&world, &Request::chat(&world.token, "chain"));
    assert_eq!(reply.status, 200);
    assert_eq!(header(&reply, "x-cognigate-model").as_deref(), Some("m2"));
    assert_eq!(
        header(&reply, "x-cognigate-fallback-depth").as_deref(),
        Some("1")
    );
    assert_eq!(
        header(&reply, "x-cognigate-cache"),
        None,
        "no level opted in"
    );
    let records = world.records.borrow();
    assert_eq!(records.len(), 1);
    let (record, _) = &records[0];
    assert_eq!(record.served_model.as_ref().map(|m| m.as_str()), Some("m2"));
    assert_eq!(record.tokens.map(|t| t.prompt), Some(12));
    assert_eq!(
        world.observed.get(),
        1,
        "the attempts reach the live stats once"
    );
    assert!(world.the_event().contains(r#""outcome":"served""#));
    assert_eq!(world.counted.borrow().len(), 1);
}

#[test]
fn an_exhausted_request_is_billed_zero_so_its_reservation_is_released() {
    let world = World::new(limited());
    for m in ["m1", "m2", "m3"] {
        world.says(m, &[Says::Unavailable]);
    }
    let reply = send(&world, &Request::chat(&world.token, "chain"));
    assert_eq!(reply.status, 502);
    let records = world.records.borrow();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].0.outcome, Outcome::Exhausted);
    assert_eq!(records[0].0.cost_usd, Some(0.0));
    assert!(world.the_event().contains(r#""outcome":"exhausted""#));
}

#[test]
fn a_stream_is_handed_to_the_runtime_with_its_bill_and_billed_when_it_settles() {
    let world = World::new(KeyPolicy::default());
    world.says("m1", &[Says::Stream]);
    let req = Request::new(
        &world.token,
        r#"{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
    );
    let reply = send(&world, &req);
    assert_eq!(reply.status, 200);
    let Body::Relay(relay) = reply.body else {
        panic!("a served stream is relayed");
    };
    assert!(relay.bill.is_some(), "the stream carries its bill");
    assert!(
        world.records.borrow().is_empty(),
        "not billed before it ends"
    );
    assert!(world.counted.borrow().is_empty(), "counted when it settles");
    assert!(world.the_event().contains(r#""outcome":"served""#));
}

#[test]
fn every_path_emits_exactly_one_request_event() {
    type Path = fn(&World) -> Request;
    let paths: [(&str, Path); 4] = [
        ("no key", |_| Request::chat("", "m1")),
        ("bad json", |w| Request::new(&w.token, "{")),
        ("unknown name", |w| Request::chat(&w.token, "nope")),
        ("served", |w| Request::chat(&w.token, "m1")),
    ];
    for (path, req) in paths {
        let world = World::new(KeyPolicy::default());
        send(&world, &req(&world));
        assert_eq!(world.request_events().len(), 1, "{path}");
    }
    let denied = World::new(limited());
    denied.refuse.set(Some((Denial::KeyRpm, None)));
    send(&denied, &Request::chat(&denied.token, "m1"));
    assert_eq!(denied.request_events().len(), 1, "denied");
}
