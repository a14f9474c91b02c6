use super::*;

fn table(capacity: usize) -> TenantTable<u32, u32> {
    TenantTable::new(capacity)
}

#[test]
fn one_tenant_filling_its_table_cannot_evict_another_tenants_entries() {
    let mut t = table(100);
    for k in 0..10 {
        t.put("a", k, k);
    }
    for k in 0..10_000 {
        t.put("b", k, k);
    }
    assert_eq!(t.len(), 100, "bounded in all");
    assert_eq!((t.len_of("a"), t.len_of("b")), (10, 90));
    for k in 0..10 {
        assert_eq!(t.get("a", &k), Some(&k), "a's entry {k} survived the flood");
    }
    // The flooder cycles through its own: its most recent are kept, its oldest went.
    assert_eq!(t.get("b", &9_999), Some(&9_999));
    assert_eq!(t.get("b", &0), None);
}

#[test]
fn a_full_table_takes_from_the_tenant_holding_the_most_until_shares_are_even() {
    let mut t = table(10);
    for k in 0..10 {
        t.put("big", k, k);
    }
    for k in 0..5 {
        t.put("small", k, k);
    }
    assert_eq!((t.len_of("big"), t.len_of("small")), (5, 5));
    // Even shares: the next write of either tenant cycles through its own entries.
    t.put("small", 5, 5);
    assert_eq!((t.len_of("big"), t.len_of("small")), (5, 5));
    assert_eq!(t.get("small", &0), None, "small's least recent went");
    assert_eq!(t.get("big", &5), Some(&5));
    t.put("big", 10, 10);
    assert_eq!((t.len_of("big"), t.len_of("small")), (5, 5));
    assert_eq!(t.get("big", &5), None);
}

#[test]
fn of_tenants_holding_as_many_the_one_with_the_oldest_entry_gives_way() {
    let mut t = table(4);
    t.put("x", 1, 1);
    t.put("y", 1, 1);
    t.put("x", 2, 2);
    t.put("y", 2, 2);
    t.put("z", 1, 1);
    assert_eq!(
        (t.len_of("x"), t.len_of("y"), t.len_of("z")),
        (1, 2, 1),
        "x's first entry was the oldest"
    );
    assert_eq!(t.get("x", &1), None);
}

#[test]
fn using_an_entry_again_makes_it_the_most_recent_and_does_not_count_twice() {
    let mut t = table(3);
    t.put("a", 1, 1);
    t.put("a", 2, 2);
    t.put("a", 1, 10);
    assert_eq!(t.len(), 2);
    t.put("a", 3, 3);
    t.put("a", 4, 4);
    assert_eq!(t.get("a", &2), None, "2 was the least recently used");
    assert_eq!(t.get("a", &1), Some(&10));
}

#[test]
fn a_new_entry_is_full_for_the_tenant_that_would_hold_the_most_only() {
    let mut t = table(4);
    assert!(!t.full_for("a"), "room left");
    for k in 0..3 {
        t.put("a", k, k);
    }
    t.put("b", 0, 0);
    assert!(t.full_for("a"), "a holds the most");
    assert!(
        !t.full_for("b"),
        "b's entry would be made room for with a's"
    );
    assert!(!t.full_for("c"), "so would a newcomer's");
}

#[test]
fn retain_drops_entries_and_tenants_left_with_none() {
    let mut t = table(10);
    t.put("a", 1, 1);
    t.put("a", 2, 2);
    t.put("b", 3, 3);
    t.retain(|v| *v != 3 && *v != 1);
    assert_eq!((t.len(), t.len_of("a"), t.len_of("b")), (1, 1, 0));
    assert_eq!(t.get("a", &2), Some(&2));
    // The dropped entries' use orders went too: a full table still evicts correctly.
    for k in 10..20 {
        t.put("c", k, k);
    }
    assert_eq!(t.get("a", &2), Some(&2));
    assert_eq!(t.len(), 10);
}
