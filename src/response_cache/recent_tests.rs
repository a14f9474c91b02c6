use super::*;

fn meta(expires_at_ms: u64) -> StoredMeta {
    StoredMeta {
        model: "m1".into(),
        provider: "p".into(),
        content_type: "application/json".into(),
        stored_at_ms: 0,
        expires_at_ms,
        cost_usd: 0.5,
        depth: 0,
        platform: None,
    }
}

fn body(len: usize) -> Rc<[u8]> {
    vec![b'x'; len].into()
}

#[test]
fn a_copy_answers_with_its_entrys_meta_and_bytes_while_fresh() {
    let mut r = RecentEntries::default();
    r.put("k", meta(1_000), body(10));
    let (m, b) = r.get("k", 999).unwrap();
    assert_eq!((m, b.len()), (meta(1_000), 10));
    assert!(r.get("other", 0).is_none(), "another key is another scope");
}

#[test]
fn a_stale_copy_never_answers_and_is_dropped() {
    let mut r = RecentEntries::default();
    r.put("k", meta(1_000), body(10));
    assert!(r.get("k", 1_000).is_none());
    assert_eq!((r.len(), r.bytes()), (0, 0));
}

#[test]
fn past_the_bound_the_least_recently_used_copies_go_first() {
    let mut r = RecentEntries::with_capacity(30);
    r.put("a", meta(9), body(10));
    r.put("b", meta(9), body(10));
    r.put("c", meta(9), body(10));
    assert!(r.get("a", 0).is_some(), "a is now the most recently used");
    r.put("d", meta(9), body(10));
    assert!(r.get("b", 0).is_none(), "b was the least recently used");
    for k in ["a", "c", "d"] {
        assert!(r.get(k, 0).is_some(), "{k} stays");
    }
    assert_eq!(r.bytes(), 30);
}

#[test]
fn a_newer_copy_replaces_the_older_and_the_bytes_count_once() {
    let mut r = RecentEntries::with_capacity(100);
    r.put("k", meta(5), body(40));
    r.put("k", meta(9), body(30));
    assert_eq!((r.len(), r.bytes()), (1, 30));
    assert_eq!(r.get("k", 6).unwrap().0.expires_at_ms, 9);
}

#[test]
fn an_answer_over_the_copy_limit_is_not_copied_and_pushes_nothing_out() {
    let mut r = RecentEntries::default();
    r.put("small", meta(9), body(10));
    r.put("big", meta(9), body(MAX_COPY_BYTES + 1));
    assert!(r.get("big", 0).is_none());
    assert!(r.get("small", 0).is_some());
    assert_eq!(r.bytes(), 10);
}
