//! The run: retention first, one page of the watch list in the store's order, eight visits at a
//! time, one `ScheduledPass` event.

use super::world::{Stored, World};
use cognigate::scheduled::{run, ProbeLimits, Visited, CONCURRENCY, PAGE};
use cognigate::usage::retention::Retention;
use futures::executor::block_on;

pub const NOW: u64 = 10_000_000;
pub const LIMITS: ProbeLimits = ProbeLimits {
    max_chat_json_values: 10_000,
    budget_ms: 30_000,
    max_park_ms: 300_000,
};

/// One run at the clock's time, with the default retention.
pub fn pass(w: &World) {
    let now = w.clock.0.get();
    block_on(run(w, Retention::from_vars(|_| None), LIMITS, now));
}

fn scheduled_passes(w: &World) -> Vec<String> {
    w.events_with(r#""msg":"scheduled pass""#)
}

#[test]
fn a_deleted_tenant_is_skipped_and_its_watch_left_to_retention() {
    let w = World::at(NOW);
    w.watch("gone", 0, Stored::Deleted);
    w.watch("acme", 1, Stored::Config);
    pass(&w);
    assert_eq!(w.configs_read(), ["gone", "acme"]);
    assert_eq!(
        w.visited(),
        ["acme"],
        "no visit is stored for a deleted tenant"
    );
    assert_eq!(w.watch.borrow().len(), 1, "its watch stays for retention");
}

#[test]
fn an_unreadable_config_still_counts_as_visited_so_it_leaves_the_head_of_the_list() {
    let w = World::at(NOW);
    w.watch("broken", 0, Stored::Unreadable);
    for i in 1..=PAGE {
        w.watch(&format!("t{i:02}"), 1, Stored::Config);
    }
    pass(&w);
    let visits = w.visits.borrow();
    let (tenant, visit) = &visits[0];
    assert_eq!(tenant, "broken");
    let stamped = Visited {
        at: NOW,
        mode: None,
        keep: true,
    };
    assert_eq!(
        *visit, stamped,
        "visited now, its mode untouched, still watched"
    );
    drop(visits);
    w.clock.advance(60_000);
    w.asked.borrow_mut().clear();
    pass(&w);
    assert_eq!(
        w.configs_read(),
        ["t50", "broken"],
        "the one left over goes first"
    );
}

#[test]
fn a_run_visits_one_page_in_the_stores_order_and_the_rest_next_run() {
    assert_eq!(PAGE, 50);
    let w = World::at(NOW);
    // t59 was visited longest ago, t00 most recently.
    for i in 0..60u64 {
        w.watch(&format!("t{i:02}"), 1_000 - i, Stored::Config);
    }
    pass(&w);
    let oldest_first: Vec<String> = (10..60).rev().map(|i| format!("t{i:02}")).collect();
    assert_eq!(w.asked.borrow()[1], "watched 50");
    assert_eq!(w.configs_read(), oldest_first);
    let passes = scheduled_passes(&w);
    assert_eq!(passes.len(), 1, "one event for seven groups: {passes:?}");
    assert!(passes[0].contains(r#""tenants":50"#), "{passes:?}");
    w.asked.borrow_mut().clear();
    pass(&w);
    let rest: Vec<String> = (0..10).rev().map(|i| format!("t{i:02}")).collect();
    assert_eq!(w.configs_read(), rest);
}

#[test]
fn visits_run_eight_at_a_time() {
    assert_eq!(CONCURRENCY, 8);
    let w = World::at(NOW);
    for i in 0..20 {
        w.watch(&format!("t{i:02}"), 0, Stored::Config);
    }
    pass(&w);
    assert_eq!(w.visited().len(), 20);
    assert_eq!(w.most_in_flight.get(), CONCURRENCY);
    assert_eq!(w.in_flight.get(), 0);
}

#[test]
fn one_scheduled_pass_event_per_run_counting_every_watch_read() {
    let w = World::at(NOW);
    w.watch("gone", 0, Stored::Deleted);
    w.watch("broken", 0, Stored::Unreadable);
    w.watch("Not a tenant!", 0, Stored::Config);
    w.watch("acme", 0, Stored::Config);
    pass(&w);
    let passes = scheduled_passes(&w);
    assert_eq!(passes.len(), 1, "{passes:?}");
    assert!(passes[0].contains(r#""tenants":4"#), "{passes:?}");
    assert!(
        passes[0].contains(&format!(r#""time":{NOW}"#)),
        "{passes:?}"
    );
    assert_eq!(
        w.configs_read(),
        ["acme", "broken", "gone"],
        "an id that does not parse is skipped"
    );
}

#[test]
fn retention_runs_first_at_the_pass_time_and_a_bad_var_does_not_stop_the_run() {
    let w = World::at(NOW);
    w.watch("acme", 0, Stored::Config);
    pass(&w);
    assert_eq!(w.asked.borrow()[..2], ["delete", "watched 50"]);
    let cutoffs = Retention::from_vars(|_| None).unwrap().cutoffs(NOW);
    assert_eq!(*w.deleted.borrow(), [cutoffs]);

    let w = World::at(NOW);
    w.watch("acme", 0, Stored::Config);
    let bad = Retention::from_vars(|_| Some("soon".to_owned()));
    assert!(bad.is_err());
    block_on(run(&w, bad, LIMITS, NOW));
    assert!(w.deleted.borrow().is_empty());
    assert_eq!(w.events_with("invalid retention vars").len(), 1);
    assert_eq!(w.visited(), ["acme"]);
    assert_eq!(scheduled_passes(&w).len(), 1);
}

#[test]
fn a_watch_list_that_cannot_be_read_ends_the_run_untold() {
    let w = World::at(NOW);
    w.watch("acme", 0, Stored::Config);
    w.watch_unreadable.set(true);
    pass(&w);
    assert_eq!(*w.asked.borrow(), ["delete", "watched 50"]);
    assert!(scheduled_passes(&w).is_empty());
}
