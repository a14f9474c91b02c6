use super::*;

const POLICY: MemoPolicy = MemoPolicy {
    ttl_ms: 10_000,
    negative_ttl_ms: 1_000,
    max_entries: 3,
    max_absent: 2,
};

fn cache() -> Memo<&'static str, u32> {
    Memo::new(POLICY)
}

fn miss(c: &mut Memo<&'static str, u32>, key: &'static str, now: u64) -> Ticket {
    match c.lookup(&key, now) {
        Lookup::Miss(t) => t,
        other => panic!("expected a miss at {now}, got {other:?}"),
    }
}

#[test]
fn no_entry_older_than_the_ttl_answers() {
    let mut c = cache();
    let t = miss(&mut c, "k", 0);
    assert!(c.store("k", Some(1), t));
    assert_eq!(c.lookup(&"k", 4_999), Lookup::Hit(1));
    assert!(matches!(c.lookup(&"k", 10_000), Lookup::Miss(_)));
}

#[test]
fn age_counts_from_when_the_read_began_not_when_it_finished() {
    let mut c = cache();
    let t = miss(&mut c, "k", 0);
    // The read took 3 s; the answer is as old as the query.
    assert!(c.store("k", Some(1), t));
    assert!(matches!(c.lookup(&"k", 10_000), Lookup::Miss(_)));
}

#[test]
fn past_half_the_ttl_one_hit_gets_a_refresh_ticket_and_the_others_plain_hits() {
    let mut c = cache();
    let t = miss(&mut c, "k", 0);
    c.store("k", Some(1), t);
    assert_eq!(c.lookup(&"k", 4_999), Lookup::Hit(1));
    let Lookup::HitRefresh(1, refresh) = c.lookup(&"k", 5_000) else {
        panic!("first lookup past half the TTL refreshes");
    };
    assert_eq!(c.lookup(&"k", 5_001), Lookup::Hit(1));
    assert!(c.store("k", Some(2), refresh));
    assert_eq!(c.lookup(&"k", 9_999), Lookup::Hit(2), "refreshed at 5 s");
    assert!(matches!(c.lookup(&"k", 14_999), Lookup::HitRefresh(2, _)));
    assert!(matches!(c.lookup(&"k", 15_000), Lookup::Miss(_)));
}

#[test]
fn a_failed_refresh_never_extends_an_entrys_life() {
    let mut c = cache();
    let t = miss(&mut c, "k", 0);
    c.store("k", Some(1), t);
    assert!(matches!(c.lookup(&"k", 5_000), Lookup::HitRefresh(..)));
    c.refresh_failed(&"k");
    // Another refresh may start at once, and the entry still ends at 10 s.
    assert!(matches!(c.lookup(&"k", 6_000), Lookup::HitRefresh(..)));
    assert!(matches!(c.lookup(&"k", 10_000), Lookup::Miss(_)));
}

#[test]
fn a_refresh_that_never_reports_back_is_retried_after_half_the_ttl() {
    let mut c = cache();
    let t = miss(&mut c, "k", 0);
    c.store("k", Some(1), t);
    assert!(matches!(c.lookup(&"k", 5_000), Lookup::HitRefresh(..)));
    assert_eq!(c.lookup(&"k", 9_999), Lookup::Hit(1));
    let t = miss(&mut c, "k", 10_000);
    c.store("k", Some(1), t);
    assert!(matches!(c.lookup(&"k", 15_000), Lookup::HitRefresh(..)));
    assert!(matches!(c.lookup(&"k", 20_000), Lookup::Miss(_)));
}

#[test]
fn a_read_that_began_before_an_invalidation_never_writes_back() {
    let mut c = cache();
    let t = miss(&mut c, "k", 0);
    c.invalidate(|_, _| true);
    assert!(!c.store("k", Some(1), t));
    assert!(matches!(c.lookup(&"k", 1), Lookup::Miss(_)));
    // Likewise a background refresh in flight across an invalidation.
    let t = miss(&mut c, "k", 1);
    c.store("k", Some(1), t);
    let Lookup::HitRefresh(_, refresh) = c.lookup(&"k", 5_001) else {
        panic!()
    };
    c.invalidate(|k, _| *k == "k");
    assert!(!c.store("k", Some(1), refresh));
    assert!(matches!(c.lookup(&"k", 5_002), Lookup::Miss(_)));
}

#[test]
fn an_older_read_never_overwrites_a_newer_one() {
    let mut c = cache();
    let slow = miss(&mut c, "k", 0);
    let fast = miss(&mut c, "k", 100);
    assert!(c.store("k", None, fast), "revoked, as the newer read saw");
    assert!(!c.store("k", Some(1), slow));
    assert_eq!(c.lookup(&"k", 200), Lookup::Absent);
}

#[test]
fn a_revocation_seen_by_a_refresh_ends_the_entry_at_once() {
    let mut c = cache();
    let t = miss(&mut c, "k", 0);
    c.store("k", Some(1), t);
    let Lookup::HitRefresh(_, refresh) = c.lookup(&"k", 5_000) else {
        panic!()
    };
    assert!(c.store("k", None, refresh));
    assert_eq!(c.lookup(&"k", 5_001), Lookup::Absent);
    assert!(matches!(c.lookup(&"k", 6_000), Lookup::Miss(_)));
}

#[test]
fn absent_keys_are_remembered_briefly_and_in_a_bounded_table() {
    let mut c = cache();
    for (i, k) in ["a", "b", "c"].into_iter().enumerate() {
        let t = miss(&mut c, k, i as u64);
        c.store(k, None, t);
    }
    assert_eq!(c.absent_len(), 2, "bounded: the oldest was forgotten");
    assert!(matches!(c.lookup(&"a", 10), Lookup::Miss(_)));
    assert_eq!(c.lookup(&"c", 10), Lookup::Absent);
    assert!(
        matches!(c.lookup(&"c", 1_002), Lookup::Miss(_)),
        "negative TTL over"
    );
}

#[test]
fn an_invalidation_forgets_absent_keys_since_a_write_may_have_created_them() {
    let mut c = cache();
    let t = miss(&mut c, "new", 0);
    c.store("new", None, t);
    c.invalidate(|_, _| false);
    assert!(matches!(c.lookup(&"new", 1), Lookup::Miss(_)));
}

#[test]
fn present_entries_are_bounded_by_dropping_the_oldest() {
    let mut c = cache();
    for (i, k) in ["a", "b", "c", "d"].into_iter().enumerate() {
        let t = miss(&mut c, k, i as u64);
        c.store(k, Some(i as u32), t);
    }
    assert_eq!(c.len(), 3);
    assert!(matches!(c.lookup(&"a", 10), Lookup::Miss(_)));
    assert_eq!(c.lookup(&"d", 10), Lookup::Hit(3));
}

#[test]
fn invalidation_drops_only_the_entries_it_picks() {
    let mut c = cache();
    for k in ["a", "b"] {
        let t = miss(&mut c, k, 0);
        c.store(k, Some(if k == "a" { 1 } else { 2 }), t);
    }
    c.invalidate(|_, v| *v == 1);
    assert!(matches!(c.lookup(&"a", 1), Lookup::Miss(_)));
    assert_eq!(c.lookup(&"b", 1), Lookup::Hit(2));
}
