use super::*;

fn settings(entry: u64, exit: u64) -> DegradedSettings {
    DegradedSettings {
        healthy_ratio: 0.5,
        entry_grace_ms: entry,
        exit_grace_ms: exit,
        min_providers: 3,
    }
}

fn of(healthy: u32, total: u32) -> ProviderCount {
    ProviderCount { healthy, total }
}

/// Runs passes at the given times and counts; returns the last state and every transition.
fn run(
    s: &DegradedSettings,
    passes: &[(u64, ProviderCount)],
) -> (DegradedMode, Vec<(u64, DegradedTransition)>) {
    let mut mode = DegradedMode::default();
    let mut seen = Vec::new();
    for &(now, count) in passes {
        let (next, t) = mode.pass(count, s, now);
        mode = next;
        seen.extend(t.map(|t| (now, t)));
    }
    (mode, seen)
}

#[test]
fn below_the_ratio_for_the_entry_grace_measured_across_passes_the_tenant_is_degraded() {
    let s = settings(60_000, 120_000);
    let (mode, seen) = run(&s, &[(0, of(1, 4)), (30_000, of(1, 4))]);
    assert_eq!(mode, DegradedMode::Entering { since: 0 });
    assert!(seen.is_empty(), "not before the grace");
    let (mode, seen) = run(&s, &[(0, of(1, 4)), (30_000, of(1, 4)), (60_000, of(1, 4))]);
    assert_eq!(mode, DegradedMode::Degraded { since: 60_000 });
    assert_eq!(mode.since(), Some(60_000));
    assert_eq!(
        seen,
        vec![(60_000, DegradedTransition::Degraded { since: 60_000 })]
    );
}

#[test]
fn a_pass_at_or_above_the_ratio_restarts_the_entry_grace() {
    let s = settings(60_000, 120_000);
    let (mode, seen) = run(
        &s,
        &[
            (0, of(1, 4)),
            (50_000, of(2, 4)),
            (70_000, of(1, 4)),
            (100_000, of(1, 4)),
        ],
    );
    assert_eq!(mode, DegradedMode::Entering { since: 70_000 });
    assert!(seen.is_empty());
}

#[test]
fn it_leaves_after_the_exit_grace_at_or_above_the_ratio_and_a_dip_keeps_it_degraded() {
    let s = settings(0, 120_000);
    let (mode, seen) = run(
        &s,
        &[
            (0, of(0, 3)),
            (60_000, of(3, 3)),
            (120_000, of(1, 3)),
            (180_000, of(2, 3)),
            (240_000, of(3, 3)),
        ],
    );
    assert_eq!(
        mode,
        DegradedMode::Leaving {
            since: 180_000,
            degraded_since: 0
        }
    );
    assert_eq!(mode.since(), Some(0), "still degraded while leaving");
    assert_eq!(seen, vec![(0, DegradedTransition::Degraded { since: 0 })]);
    let (next, t) = mode.pass(of(3, 3), &s, 300_000);
    assert_eq!(next, DegradedMode::Healthy);
    assert_eq!(t, Some(DegradedTransition::Recovered { degraded_since: 0 }));
}

#[test]
fn a_tenant_with_fewer_than_min_providers_is_never_degraded() {
    let s = settings(0, 0);
    let (mode, seen) = run(&s, &[(0, of(0, 2)), (60_000, of(0, 2))]);
    assert_eq!(mode, DegradedMode::Healthy);
    assert!(seen.is_empty());
    // Providers deleted while degraded: it recovers at once, whatever the exit grace.
    let s = settings(0, 600_000);
    let (mode, _) = run(&s, &[(0, of(0, 3))]);
    let (next, t) = mode.pass(of(0, 2), &s, 1_000);
    assert_eq!(next, DegradedMode::Healthy);
    assert_eq!(t, Some(DegradedTransition::Recovered { degraded_since: 0 }));
}

#[test]
fn zero_graces_move_in_one_pass_each_way() {
    let s = settings(0, 0);
    let (mode, seen) = run(&s, &[(5, of(1, 3)), (9, of(2, 3))]);
    assert_eq!(mode, DegradedMode::Healthy);
    assert_eq!(
        seen,
        vec![
            (5, DegradedTransition::Degraded { since: 5 }),
            (9, DegradedTransition::Recovered { degraded_since: 5 })
        ]
    );
}

#[test]
fn exactly_the_ratio_is_healthy() {
    let s = settings(0, 0);
    assert_eq!(run(&s, &[(0, of(2, 4))]).0, DegradedMode::Healthy);
    assert!(run(&s, &[(0, of(1, 3))]).0.is_degraded());
}

#[test]
fn a_provider_is_usable_with_one_closed_model_and_one_unparked_key() {
    assert!(provider_usable(["a", "b"].into_iter(), &["a"], 2, 1));
    assert!(
        !provider_usable(["a", "b"].into_iter(), &["a", "b"], 2, 0),
        "every breaker open"
    );
    assert!(
        !provider_usable(["a"].into_iter(), &[], 2, 2),
        "every key parked"
    );
    assert!(!provider_usable(std::iter::empty(), &[], 1, 0), "no model");
}
