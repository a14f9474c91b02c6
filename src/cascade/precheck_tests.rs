//! Host tests of the one decision the cascade and `explain` share.

use super::*;

fn admitted(admission: Gate) -> Check {
    Check {
        supported: true,
        fit: Fit::Fits,
        admission: Some(admission),
        parked_until: None,
    }
}

#[test]
fn a_closed_breaker_is_tried() {
    assert_eq!(
        decide(&admitted(Gate::Pass), 0),
        Decision::Try { parked_until: None }
    );
    let d = decide(&admitted(Gate::Probe { token: 3 }), 0);
    assert_eq!((d.reason(), d.until()), (None, None), "a probe is a try");
}

#[test]
fn an_open_breaker_is_skipped_until_its_end() {
    let d = decide(&admitted(Gate::Skip { until: Some(5_000) }), 10);
    assert_eq!(
        d,
        Decision::Skip {
            reason: Reason::BreakerOpen,
            until: Some(5_000)
        }
    );
    // A probe in flight: skipped, with no known end.
    let d = decide(&admitted(Gate::Skip { until: None }), 10);
    assert_eq!((d.reason(), d.until()), (Some(Reason::BreakerOpen), None));
}

#[test]
fn a_used_up_rpm_is_a_local_rate_limit_until_a_slot_frees() {
    let d = decide(&admitted(Gate::Limited { until: 60_000 }), 10);
    assert_eq!(
        (d.reason(), d.until()),
        (Some(Reason::LocalRateLimit), Some(60_000))
    );
}

#[test]
fn a_pool_every_key_of_which_is_parked_is_tried_naming_the_earliest_free_time() {
    let parked = Check {
        parked_until: Some(9_000),
        ..admitted(Gate::Pass)
    };
    let d = decide(&parked, 10);
    assert_eq!(
        d,
        Decision::Try {
            parked_until: Some(9_000)
        }
    );
    assert_eq!(
        (d.reason(), d.until()),
        (Some(Reason::KeysParked), Some(9_000))
    );
    assert_eq!(decide(&parked, 9_000), Decision::Try { parked_until: None });
    // An open breaker still wins: nothing is tried, parked or not.
    let both = Check {
        parked_until: Some(9_000),
        ..admitted(Gate::Skip { until: Some(5_000) })
    };
    assert_eq!(decide(&both, 10).reason(), Some(Reason::BreakerOpen));
}

#[test]
fn a_family_that_cannot_serve_the_surface_is_a_capability_skip_before_admission() {
    let unsupported = Check {
        supported: false,
        fit: Fit::TooLarge,
        admission: None,
        parked_until: None,
    };
    let d = decide(&unsupported, 0);
    assert_eq!((d.reason(), d.until()), (Some(Reason::Capability), None));
    assert_eq!(Reason::Capability.failure(), Failure::Unsupported);
}

#[test]
fn a_prompt_the_window_cannot_hold_is_skipped_before_admission() {
    let too_large = Check {
        fit: Fit::TooLarge,
        ..admitted(Gate::Pass)
    };
    assert_eq!(decide(&too_large, 0).reason(), Some(Reason::ContextWindow));
    let truncated = Check {
        fit: Fit::Truncated { dropped: 2 },
        admission: None,
        ..too_large
    };
    assert_eq!(decide(&truncated, 0), Decision::Try { parked_until: None });
}

#[test]
fn every_reason_reads_as_the_issue_spells_it() {
    let all = [
        Reason::BreakerOpen,
        Reason::KeysParked,
        Reason::ContextWindow,
        Reason::LocalRateLimit,
        Reason::Capability,
    ];
    for r in all {
        assert_eq!(
            serde_json::to_value(r).unwrap(),
            serde_json::Value::from(r.as_str())
        );
    }
}
