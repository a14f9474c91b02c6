//! A tenant's visit: one probe per due breaker, through the cascade, failing closed; then the
//! degraded decision, stored with the watch and published when it moves.

use super::pass::{pass, NOW};
use super::world::{Stored, World};
use cognigate::events::{Alert, Event};
use cognigate::health::degraded::DegradedTransition;
use cognigate::health::probe_record::ProbeRecord;
use cognigate::scheduled::Visited;

/// `acme` watched, m1 on p1 past its open duration (due), m2 on p2 tripped a second ago.
fn one_due() -> World {
    let w = World::at(NOW);
    w.watch("acme", 0, Stored::Config);
    w.trip("acme", "p1", "m1", NOW - 61_000);
    w.trip("acme", "p2", "m2", NOW - 1_000);
    w
}

#[test]
fn a_due_breaker_gets_exactly_one_probe_of_max_tokens_1() {
    let w = one_due();
    pass(&w);
    let sent = w.sent.borrow().clone();
    assert_eq!(sent, [("m1".to_owned(), Some("1".to_owned()))]);
    assert_eq!(
        w.probe_acquires.get(),
        1,
        "the open breaker not due is not asked"
    );
    assert_eq!(w.alert_kinds(), ["breaker.probe"]);
    let (_, _, at, body) = w.alerts.borrow()[0].clone();
    assert_eq!(at, NOW + 10, "timed when the probe came back");
    let expected = Event::Alert(Alert::Probe {
        tenant: "acme",
        provider: "p1",
        model: "m1",
        failed: None,
        time: NOW + 10,
    });
    assert_eq!(body, expected.to_line());
    assert_eq!(w.reports.get(), 1, "the success is reported");
    assert_eq!(w.not_closed("acme"), ["acme/p2/m2"], "the probe closed m1");
    let visited = Visited {
        at: NOW,
        mode: None,
        keep: true,
    };
    assert_eq!(w.visits.borrow()[0].1, visited, "m2 still open: watched");
}

#[test]
fn a_failed_probe_is_told_and_leaves_the_breaker_open() {
    let w = one_due();
    w.upstream_status.set(503);
    pass(&w);
    assert_eq!(w.sent.borrow().len(), 1);
    let (_, kind, _, body) = w.alerts.borrow()[0].clone();
    assert_eq!(kind, "breaker.probe");
    assert!(
        body.contains(r#""reason":"probe failed: server""#),
        "{body}"
    );
    assert_eq!(w.not_closed("acme"), ["acme/p1/m1", "acme/p2/m2"]);
}

#[test]
fn a_probe_fails_closed_when_its_slot_cannot_be_reached() {
    let w = one_due();
    w.probe_unreachable.set(true);
    pass(&w);
    assert_eq!(w.probe_acquires.get(), 1);
    assert!(w.sent.borrow().is_empty(), "no probe without the slot");
    assert!(w.alerts.borrow().is_empty());
}

#[test]
fn a_tenant_with_probes_off_is_never_probed() {
    let w = one_due();
    w.probes_off.set(true);
    pass(&w);
    assert_eq!(w.probe_acquires.get(), 0);
    assert!(w.sent.borrow().is_empty());
}

#[test]
fn a_provider_whose_state_cannot_be_read_is_neither_probed_nor_counted() {
    let w = one_due();
    w.unreadable_views.borrow_mut().insert("acme/p1".to_owned());
    pass(&w);
    assert!(w.sent.borrow().is_empty());
    let faults = w.events_with("provider state unreadable");
    assert_eq!(faults.len(), 1, "{faults:?}");
    for field in [
        r#""provider":"p1""#,
        r#""error":"routing object answered 500""#,
    ] {
        assert!(faults[0].contains(field), "{faults:?}");
    }
}

#[test]
fn the_degraded_decision_is_stored_and_its_transition_published() {
    let w = World::at(NOW);
    w.watch("acme", 0, Stored::Config);
    w.probes_off.set(true);
    w.trip("acme", "p1", "m1", NOW - 1_000);
    w.trip("acme", "p2", "m2", NOW - 1_000);
    pass(&w);
    // One provider of three usable: below the ratio, not yet for the entry grace.
    let entering = format!(r#"{{"state":"entering","since":{NOW}}}"#);
    let visit = w.visits.borrow()[0].1.clone();
    let stored = Visited {
        at: NOW,
        mode: Some(Some(entering)),
        keep: true,
    };
    assert_eq!(visit, stored);
    assert!(w.alerts.borrow().is_empty());

    let later = NOW + 60_000;
    w.clock.0.set(later);
    pass(&w);
    let degraded = format!(r#"{{"state":"degraded","since":{later}}}"#);
    assert_eq!(w.visits.borrow()[1].1.mode, Some(Some(degraded)));
    let expected = Event::Alert(Alert::Degraded {
        tenant: "acme",
        transition: DegradedTransition::Degraded { since: later },
        healthy: 1,
        total: 3,
        time: later,
    });
    let alerts = w.alerts.borrow();
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0].1, "tenant.degraded");
    assert_eq!(alerts[0].3, expected.to_line());

    drop(alerts);
    w.clock.0.set(later + 60_000);
    pass(&w);
    assert_eq!(w.visits.borrow()[2].1.mode, None, "unchanged: not written");
}

#[test]
fn a_healthy_tenant_with_every_breaker_closed_leaves_the_watch_list() {
    let w = World::at(NOW);
    w.watch("acme", 0, Stored::Config);
    pass(&w);
    let left = Visited {
        at: NOW,
        mode: None,
        keep: false,
    };
    assert_eq!(w.visits.borrow()[0].1, left);
    assert!(w.watch.borrow().is_empty());
}

/// The probe record `acme`'s `provider` object keeps.
fn probes(w: &World, provider: &str) -> Option<ProbeRecord> {
    let states = w.states.borrow();
    let st = states
        .get(&format!("acme/{provider}"))
        .cloned()
        .unwrap_or_default();
    st.pass_view(w.clock.0.get()).probes
}

#[test]
fn a_scheduled_probes_report_records_its_verdict_send_time_and_duration_on_the_provider() {
    let w = one_due();
    w.upstream_status.set(503);
    pass(&w);
    let failed = ProbeRecord {
        reachable: false,
        last_probe_at: NOW,
        last_probe_ms: 10,
        consecutive_failures: 1,
    };
    assert_eq!(probes(&w, "p1"), Some(failed));
    assert_eq!(probes(&w, "p2"), None, "the breaker not due was not probed");
}
