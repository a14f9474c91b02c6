use super::*;
use crate::config::KeyId;

fn keys() -> Vec<KeyId> {
    vec!["a".into(), "b".into(), "c".into()]
}

const G: Grant = Grant {
    until: 1_000,
    cursor: 0,
    block: 64,
};

#[test]
fn a_grant_issued_before_the_isolates_latest_report_is_discarded() {
    let mut book = ProviderGrants::default();
    let ticket = book.ticket(); // the acquire leaves...
    book.news(); // ...a report for the provider is sent meanwhile...
    assert!(
        !book.install(&"m".into(), G, ticket),
        "...so its grant is stale"
    );
    assert_eq!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 10),
        None
    );
}

#[test]
fn a_grant_answered_while_a_report_was_in_flight_is_discarded_too() {
    let mut book = ProviderGrants::default();
    book.news(); // report sent
    let ticket = book.ticket(); // acquire sent before the report's answer
    book.news(); // report answered
    assert!(!book.install(&"m".into(), G, ticket));
}

#[test]
fn a_grant_with_no_news_since_its_acquire_is_installed_and_used_until_its_clock_ends() {
    let mut book = ProviderGrants::default();
    let ticket = book.ticket();
    assert!(book.install(&"m".into(), G, ticket));
    assert!(book
        .take(&"m".into(), &keys(), KeyStrategy::Failover, 999)
        .is_some());
    assert_eq!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 1_000),
        None
    );
    assert_eq!(
        book.take(&"other".into(), &keys(), KeyStrategy::Failover, 0),
        None
    );
}

#[test]
fn news_ends_every_grant_of_the_provider() {
    let mut book = ProviderGrants::default();
    let ticket = book.ticket();
    book.install(&"m".into(), G, ticket);
    book.install(&"n".into(), G, ticket);
    book.news();
    assert_eq!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 0),
        None
    );
    assert_eq!(
        book.take(&"n".into(), &keys(), KeyStrategy::Failover, 0),
        None
    );
}

#[test]
fn an_open_breaker_is_skipped_locally_until_its_own_end_or_the_lease_whichever_is_sooner() {
    let mut book = ProviderGrants::default();
    let ticket = book.ticket();
    assert!(book.install_skip(&"m".into(), 5_000, 0, 1_000, ticket));
    assert_eq!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 999),
        Some(LocalAdmission::Skip {
            breaker_until: 5_000
        })
    );
    assert_eq!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 1_000),
        None,
        "the lease ended first: ask again"
    );
    assert!(book.install_skip(&"m".into(), 1_500, 1_000, 1_000, book.ticket()));
    assert_eq!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 1_500),
        None,
        "the breaker's open time ended first: ask again (it may be half-open)"
    );
}

#[test]
fn a_skip_from_before_the_isolates_latest_report_is_not_installed_and_news_ends_skips() {
    let mut book = ProviderGrants::default();
    let ticket = book.ticket();
    book.news();
    assert!(!book.install_skip(&"m".into(), 5_000, 0, 1_000, ticket));
    assert!(book.install_skip(&"m".into(), 5_000, 0, 1_000, book.ticket()));
    book.news();
    assert_eq!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 1),
        None
    );
}

#[test]
fn a_grant_replaces_a_skip_and_a_skip_replaces_a_grant() {
    let mut book = ProviderGrants::default();
    let t = book.ticket();
    book.install_skip(&"m".into(), 5_000, 0, 1_000, t);
    book.install(&"m".into(), G, t);
    assert!(matches!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 1),
        Some(LocalAdmission::Admit(_))
    ));
    book.install_skip(&"m".into(), 5_000, 2, 1_000, t);
    assert!(matches!(
        book.take(&"m".into(), &keys(), KeyStrategy::Failover, 3),
        Some(LocalAdmission::Skip { .. })
    ));
}

#[test]
fn jitter_keeps_between_70_and_100_percent_of_a_grants_remaining_time() {
    let g = Grant {
        until: 1_100,
        cursor: 3,
        block: 64,
    };
    assert_eq!(jittered(g, 100, 0).until, 800);
    assert_eq!(jittered(g, 100, 30).until, 1_100);
    assert_eq!(jittered(g, 100, 31).until, 800, "wraps into the range");
    assert_eq!(
        jittered(g, 2_000, 7).until,
        2_000,
        "a spent grant stays spent"
    );
    assert_eq!(jittered(g, 100, 5).cursor, 3);
}

#[test]
fn a_lease_passed_without_the_objects_word_keeps_its_key_order_and_holds_no_grant() {
    let lease = Lease::pass(keys());
    assert_eq!(lease.admission, Gate::Pass);
    assert_eq!(lease.keys, keys());
    assert_eq!(lease.grant, None);
}
