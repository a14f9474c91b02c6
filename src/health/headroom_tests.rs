use super::*;

fn fig(family: Family, remaining: u64, limit: Option<u64>, now: u64) -> Figure {
    Figure::read(family, remaining, limit, None, now)
}

fn keys(ids: &[&str]) -> Vec<KeyId> {
    ids.iter().map(|k| KeyId::new(*k)).collect()
}

#[test]
fn a_keys_headroom_is_the_smallest_share_over_the_families_it_reports() {
    let mut h = Headrooms::default();
    h.see(
        "a",
        &[
            fig(Family::Requests, 90, Some(100), 0),
            fig(Family::Tokens, 2_000, Some(10_000), 0),
        ],
    );
    assert_eq!(h.headroom("a", 1), Some(0.2));
    assert_eq!(h.headroom("b", 1), None, "no figure");
}

#[test]
fn without_a_limit_the_largest_remaining_seen_stands_in_as_the_limit() {
    let mut h = Headrooms::default();
    h.see("a", &[fig(Family::Requests, 400, None, 0)]);
    assert_eq!(
        h.headroom("a", 1),
        Some(1.0),
        "the first figure is its own limit"
    );
    h.see("a", &[fig(Family::Requests, 100, None, 10)]);
    assert_eq!(h.headroom("a", 11), Some(0.25));
    h.see("a", &[fig(Family::Requests, 40, Some(50), 20)]);
    assert_eq!(h.headroom("a", 21), Some(0.8), "a given limit wins");
}

#[test]
fn a_figure_expires_at_its_reset_or_60_s_after_it_was_seen_without_one() {
    let mut h = Headrooms::default();
    h.see("a", &[fig(Family::Requests, 1, Some(100), 1_000)]);
    assert_eq!(h.headroom("a", 1_000 + UNRESET_MS - 1), Some(0.01));
    assert_eq!(h.headroom("a", 1_000 + UNRESET_MS), None);
    let reset = Figure::read(Family::Tokens, 1, Some(100), Some(500_000), 1_000);
    h.see("b", &[reset]);
    assert_eq!(h.headroom("b", 499_999), Some(0.01));
    assert_eq!(h.headroom("b", 500_000), None);
    assert_eq!(h.seen("b"), Some(1_000), "when it was seen is kept");
}

#[test]
fn figures_merge_by_time_seen_and_merging_twice_changes_nothing() {
    let mut a = Headrooms::default();
    a.see("k", &[fig(Family::Requests, 10, Some(100), 5)]);
    let mut b = Headrooms::default();
    b.see("k", &[fig(Family::Requests, 80, Some(100), 9)]);
    assert!(a.merge(&b));
    assert_eq!(a.headroom("k", 10), Some(0.8));
    assert!(!a.merge(&b), "the same figures again change nothing");
    let mut older = Headrooms::default();
    older.see("k", &[fig(Family::Requests, 1, Some(100), 1)]);
    a.merge(&older);
    assert_eq!(a.headroom("k", 10), Some(0.8), "an older figure never wins");
}

#[test]
fn most_remaining_starts_from_the_most_headroom_unknown_keys_after_those_above_10_percent() {
    let mut h = Headrooms::default();
    h.see("a", &[fig(Family::Requests, 5, Some(100), 0)]);
    h.see("b", &[fig(Family::Requests, 80, Some(100), 0)]);
    h.see("c", &[fig(Family::Requests, 30, Some(100), 0)]);
    h.see("e", &[fig(Family::Requests, 10, Some(100), 0)]);
    let order = h.order(&keys(&["a", "b", "c", "d", "e"]), 1);
    assert_eq!(order, keys(&["b", "c", "d", "e", "a"]));
}

#[test]
fn ties_keep_the_round_robin_order_they_came_in() {
    let mut h = Headrooms::default();
    h.see("a", &[fig(Family::Requests, 50, Some(100), 0)]);
    h.see("b", &[fig(Family::Requests, 50, Some(100), 0)]);
    assert_eq!(h.order(&keys(&["b", "a", "c"]), 1), keys(&["b", "a", "c"]));
    assert_eq!(h.order(&keys(&["a", "c", "b"]), 1), keys(&["a", "b", "c"]));
    let none = Headrooms::default();
    assert_eq!(none.order(&keys(&["c", "a"]), 1), keys(&["c", "a"]));
}

#[test]
fn the_best_key_is_the_largest_live_headroom() {
    let mut h = Headrooms::default();
    assert_eq!(h.best(0), None);
    h.see("a", &[fig(Family::Requests, 5, Some(100), 0)]);
    h.see("b", &[fig(Family::Tokens, 2, Some(100), 0)]);
    assert_eq!(h.best(1), Some(0.05));
    assert_eq!(
        h.best(UNRESET_MS),
        None,
        "expired figures hold nothing back"
    );
}

#[test]
fn expired_figures_are_forgotten_a_day_after_their_end() {
    let mut h = Headrooms::default();
    h.see("a", &[fig(Family::Requests, 5, None, 0)]);
    h.forget(UNRESET_MS + FORGET_MS - 1);
    assert_eq!(h.seen("a"), Some(0));
    h.forget(UNRESET_MS + FORGET_MS);
    assert!(h.is_empty());
}

#[test]
fn a_figure_travels_as_six_numbers_and_an_unknown_family_is_refused() {
    let f = Figure::read(Family::OutputTokens, 5, None, Some(9), 1);
    let wire = serde_json::to_string(&f).unwrap();
    assert_eq!(wire, "[3,5,0,5,1,9]");
    assert_eq!(serde_json::from_str::<Figure>(&wire).unwrap(), f);
    assert!(serde_json::from_str::<Figure>("[9,5,0,5,1,9]").is_err());
    let limited = Figure::read(Family::Requests, 5, Some(0), None, 1);
    assert_eq!(limited.limit, None, "a limit of 0 is no limit");
}
