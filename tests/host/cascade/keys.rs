//! Spec §3 "Running the cascade", the key pool: a 429 rotates to the next key without depth,
//! round robin and failover pick the first key, Retry-After parks a key for exactly its window,
//! and a fully parked pool is tried anyway. Over fake ports with an injected clock.

use super::{failures, served, RATE_LIMITED};
use crate::support::fakes::{FakeClock, Script};
use crate::support::world::{World, LIMITS};
use cognigate::cascade::retry_after::imf_fixdate;
use cognigate::cascade::{Failure, Limits};

#[test]
fn a_429_rotates_to_the_next_key_and_retries_the_same_model_without_depth() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 2, "failover");
    w.upstream.script("m1", &[RATE_LIMITED]);
    let o = w.run("chain");
    assert_eq!(served(&o), ("answer from m1".into(), 0));
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2"]);
}

#[test]
fn only_when_every_key_returned_429_does_the_cascade_move_on() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 3, "failover");
    w.upstream
        .script("m1", &[RATE_LIMITED, RATE_LIMITED, RATE_LIMITED]);
    let o = w.run("chain");
    assert_eq!(served(&o), ("answer from m2".into(), 1));
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k3", "p2-k1"]);
    assert_eq!(
        failures(&o)[0],
        ("m1".into(), Some(Failure::RateLimit), Some(429))
    );
}

#[test]
fn round_robin_starts_each_request_one_key_further() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 3, "round_robin");
    for _ in 0..6 {
        w.run("m1");
    }
    assert_eq!(
        w.upstream.keys_used(),
        ["p1-k1", "p1-k2", "p1-k3", "p1-k1", "p1-k2", "p1-k3"]
    );
}

#[test]
fn round_robin_still_tries_the_whole_pool_before_moving_on() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 3, "round_robin");
    w.run("m1");
    w.upstream
        .script("m1", &[RATE_LIMITED, RATE_LIMITED, RATE_LIMITED]);
    let o = w.run("chain");
    assert_eq!(served(&o).1, 1);
    assert_eq!(&w.upstream.keys_used()[1..4], ["p1-k2", "p1-k3", "p1-k1"]);
}

#[test]
fn failover_always_starts_at_the_first_key() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 3, "failover");
    for _ in 0..3 {
        w.run("m1");
    }
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k1", "p1-k1"]);
}

#[test]
fn retry_after_seconds_parks_the_key_for_exactly_that_long() {
    let clock = FakeClock(1_000_000.into());
    let w = World::new(&clock, 2, "failover");
    w.upstream
        .script("m1", &[Script::Status(429, Some("30"), "")]);
    w.run("m1");
    // The 429 arrived after the fake's 10 ms of latency.
    let parked_at = 1_000_000 + 10;
    // Later requests skip the parked key...
    w.run("m1");
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k2"]);
    // ...until exactly 30 s after the 429 arrived.
    clock.0.set(parked_at + 29_999);
    w.run("m1");
    assert_eq!(w.upstream.keys_used().last().unwrap(), "p1-k2");
    clock.0.set(parked_at + 30_000);
    w.run("m1");
    assert_eq!(w.upstream.keys_used().last().unwrap(), "p1-k1");
}

#[test]
fn a_century_long_retry_after_parks_the_key_for_max_park_ms_and_no_longer() {
    let clock = FakeClock(1_000_000.into());
    let w = World::new(&clock, 2, "failover");
    w.upstream
        .script("m1", &[Script::Status(429, Some("3153600000"), "")]);
    let limits = Limits {
        max_park_ms: 5_000,
        degraded: false,
        ..LIMITS
    };
    w.run_with("m1", limits);
    let parked_at = 1_000_000 + 10;
    let parks: Vec<u64> = w
        .state
        .reports
        .borrow()
        .iter()
        .flat_map(|r| r.parks.iter().map(|p| p.until))
        .collect();
    assert_eq!(parks, [parked_at + 5_000]);
    clock.0.set(parked_at + 4_999);
    w.run_with("m1", limits);
    clock.0.set(parked_at + 5_000);
    w.run_with("m1", limits);
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k2", "p1-k1"]);
}

#[test]
fn retry_after_http_date_parks_the_key_until_that_date() {
    let clock = FakeClock(1_800_000_000_000.into());
    let w = World::new(&clock, 2, "failover");
    let until = 1_800_000_045_000;
    let header: &'static str = Box::leak(imf_fixdate(until).into_boxed_str());
    w.upstream
        .script("m1", &[Script::Status(429, Some(header), "")]);
    w.run("m1");
    let parks: Vec<_> = w
        .state
        .reports
        .borrow()
        .iter()
        .flat_map(|r| r.parks.clone())
        .collect();
    assert_eq!(parks.len(), 1);
    assert_eq!(
        (parks[0].key.as_str(), parks[0].until),
        (
            w.cfg.providers.values().next().unwrap().keys[0].id.as_str(),
            until
        )
    );
    w.run("m1");
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k2"]);
}

#[test]
fn no_retry_after_means_no_park_and_no_report() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 2, "failover");
    w.upstream.script("m1", &[RATE_LIMITED]);
    w.run("m1");
    w.run("m1");
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k1"]);
    assert!(w.state.reports.borrow().is_empty());
}

#[test]
fn unparsable_or_past_retry_after_parks_nothing() {
    let clock = FakeClock(1_800_000_000_000.into());
    let w = World::new(&clock, 2, "failover");
    w.upstream
        .script("m1", &[Script::Status(429, Some("soon"), "")]);
    w.run("m1");
    w.upstream.script(
        "m1",
        &[Script::Status(
            429,
            Some("Sun, 06 Nov 1994 08:49:37 GMT"),
            "",
        )],
    );
    w.run("m1");
    w.run("m1");
    assert_eq!(w.upstream.keys_used().last().unwrap(), "p1-k1");
}

#[test]
fn when_every_key_is_parked_the_whole_pool_is_tried_anyway() {
    let clock = FakeClock::default();
    let w = World::new(&clock, 2, "failover");
    w.upstream.script(
        "m1",
        &[
            Script::Status(429, Some("60"), ""),
            Script::Status(429, Some("60"), ""),
        ],
    );
    w.run("chain");
    let before = w.upstream.count();
    let o = w.run("m1");
    assert_eq!(served(&o).1, 0);
    assert_eq!(
        w.upstream.count() - before,
        1,
        "a parked pool is still tried"
    );
}

const FIVE_LEFT: &[(&str, &str)] = &[
    ("x-ratelimit-limit-requests", "100"),
    ("x-ratelimit-remaining-requests", "5"),
];
const EIGHTY_LEFT: &[(&str, &str)] = &[
    ("x-ratelimit-limit-requests", "100"),
    ("x-ratelimit-remaining-requests", "80"),
];

#[test]
fn most_remaining_starts_the_next_requests_from_the_key_with_the_most_headroom() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 2, "most_remaining");
    // Round-robin while nothing is known: k1 answers with 5% left, k2 with 80%.
    w.upstream.script(
        "m1",
        &[Script::OkWith(FIVE_LEFT), Script::OkWith(EIGHTY_LEFT)],
    );
    w.run("m1");
    w.run("m1");
    for _ in 0..3 {
        w.run("m1");
    }
    assert_eq!(
        w.upstream.keys_used(),
        ["p1-k1", "p1-k2", "p1-k2", "p1-k2", "p1-k2"]
    );
    // The figures expire 60 s after they were seen: the rotation comes back.
    clock.advance(60_000);
    w.run("m1");
    w.run("m1");
    let used = w.upstream.keys_used();
    assert!(used[5..].contains(&"p1-k1".to_owned()), "{used:?}");
}

#[test]
fn headroom_is_read_from_every_answer_whatever_the_key_strategy() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 2, "failover");
    w.upstream.script("m1", &[Script::OkWith(FIVE_LEFT)]);
    w.run("m1");
    let rooms = w.state.stats.borrow()["p1"].headrooms();
    let provider = w.cfg.providers.values().next().unwrap();
    let key = &provider.keys.iter().next().unwrap().id;
    assert_eq!(rooms.headroom(key, 1_010), Some(0.05));
    assert_eq!(rooms.headroom("another", 1_010), None);
    assert_eq!(
        w.upstream.keys_used(),
        ["p1-k1"],
        "failover keeps its order: only the ranking reads the figure"
    );
}
