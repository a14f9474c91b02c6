//! A provider's own park lengths: `max_park_ms` in place of the deployment's `MAX_PARK_MS`
//! (raising or lowering it), and `rate_limit_cooldown_ms` for a 429 that carries no hint.

use super::RATE_LIMITED;
use crate::support::fakes::{FakeClock, Script};
use crate::support::world::{World, LIMITS};
use cognigate::config::{ProviderName, Resilience};

const WEEKLY: Script = Script::Status(429, Some("500000"), "weekly quota used up");

fn p1<'w>(w: &'w mut World<'_>) -> &'w mut Resilience {
    let name = ProviderName::parse("p1").unwrap();
    &mut w.cfg.providers.get_mut(&name).unwrap().resilience
}

fn parks(w: &World<'_>) -> Vec<u64> {
    w.state
        .reports
        .borrow()
        .iter()
        .flat_map(|r| r.parks.iter().map(|p| p.until))
        .collect()
}

#[test]
fn max_park_ms_above_the_deployments_cap_honours_a_weekly_retry_after_of_500000_s() {
    let clock = FakeClock(1_000.into());
    let mut w = World::new(&clock, 2, "failover");
    p1(&mut w).max_park_ms = Some(604_800_000);
    w.upstream.script("m1", &[WEEKLY]);
    w.run("m1");
    assert_eq!(parks(&w), [1_010 + 500_000_000]);
    // Days later (past the deployment's one-hour cap) the key is still skipped.
    clock.0.set(1_010 + 499_999_999);
    w.run("m1");
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k2"]);
}

#[test]
fn without_max_park_ms_the_deployments_max_park_ms_caps_the_same_answer() {
    let clock = FakeClock(1_000.into());
    let w = World::new(&clock, 2, "failover");
    w.upstream.script("m1", &[WEEKLY]);
    w.run("m1");
    assert_eq!(parks(&w), [1_010 + LIMITS.max_park_ms]);
}

#[test]
fn max_park_ms_below_the_deployments_cap_lowers_it() {
    let clock = FakeClock(1_000.into());
    let mut w = World::new(&clock, 2, "failover");
    p1(&mut w).max_park_ms = Some(2_000);
    w.upstream.script("m1", &[WEEKLY]);
    w.run("m1");
    assert_eq!(parks(&w), [1_010 + 2_000]);
}

#[test]
fn rate_limit_cooldown_ms_parks_a_hintless_429_and_the_next_request_skips_the_key() {
    let clock = FakeClock(1_000.into());
    let mut w = World::new(&clock, 2, "failover");
    p1(&mut w).rate_limit_cooldown_ms = Some(90_000);
    w.upstream.script("m1", &[RATE_LIMITED]);
    w.run("m1");
    assert_eq!(parks(&w), [1_010 + 90_000]);
    w.run("m1");
    assert_eq!(w.upstream.keys_used(), ["p1-k1", "p1-k2", "p1-k2"]);
}

#[test]
fn a_retry_after_still_wins_over_rate_limit_cooldown_ms() {
    let clock = FakeClock(1_000.into());
    let mut w = World::new(&clock, 2, "failover");
    p1(&mut w).rate_limit_cooldown_ms = Some(90_000);
    w.upstream
        .script("m1", &[Script::Status(429, Some("5"), "")]);
    w.run("m1");
    assert_eq!(parks(&w), [1_010 + 5_000]);
}

#[test]
fn rate_limit_cooldown_ms_obeys_the_park_cap_in_force() {
    let clock = FakeClock(1_000.into());
    let mut w = World::new(&clock, 2, "failover");
    p1(&mut w).rate_limit_cooldown_ms = Some(604_800_000);
    w.upstream.script("m1", &[RATE_LIMITED]);
    w.run("m1");
    assert_eq!(parks(&w), [1_010 + LIMITS.max_park_ms]);
}
