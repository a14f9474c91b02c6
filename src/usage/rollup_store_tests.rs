use super::*;
use crate::config::{ModelId, ProviderName, TenantId};
use crate::usage::spend::Spend;
use crate::usage::{Outcome, TokenCounts};

/// The Durable Object storage limits this layout must stay far below.
const DO_VALUE_LIMIT: usize = 128 * 1024;
const DO_KEY_LIMIT: usize = 2 * 1024;

fn record(at_ms: u64, end_user: &str, model: &str) -> UsageRecord {
    UsageRecord {
        at_ms,
        request_id: String::new(),
        tenant: TenantId::parse("t").unwrap(),
        key_id: "key_0123456789abcdef0123456789abcdef".into(),
        end_user: Some(end_user.to_owned()),
        requested: model.into(),
        served_model: Some(ModelId::parse(model).unwrap()),
        provider: Some(ProviderName::parse(&"p".repeat(63)).unwrap()),
        tokens: Some(TokenCounts::new(123_456, 654_321, 1_000)),
        cost_usd: Some(12.345_678_901_234),
        usage_source: Default::default(),
        generation: 7,
        outcome: Outcome::Served,
        cache_hit: false,
        saved_usd: None,
        cache_savings_usd: None,
    }
}

/// A 128-byte end user, the longest the request path keeps, made of characters JSON escapes
/// (so each costs two bytes in the stored text).
fn end_user(i: usize) -> String {
    let id = format!("{i:06}");
    format!("{id}{}", "\"\\".repeat((128 - id.len()) / 2))
}

fn assert_bounded(w: &StorageWrites) {
    for (k, v) in &w.puts {
        assert!(k.len() < DO_KEY_LIMIT, "key of {} bytes", k.len());
        assert!(
            v.len() <= MAX_VALUE_BYTES,
            "value of {} bytes over {MAX_VALUE_BYTES}",
            v.len()
        );
    }
}

#[test]
fn every_stored_value_stays_under_2_kib_with_10_000_distinct_end_users_in_one_minute() {
    let model = "m".repeat(128);
    let mut rows = RollupRows::default();
    let mut legacy = PendingRollups::default();
    for i in 0..10_000 {
        let r = record(60_000 + i as u64, &end_user(i), &model);
        assert_eq!(r.end_user.as_ref().map(String::len), Some(128));
        rows.add(&r);
        legacy.add(&r);
    }
    let w = rows.take_writes();
    assert_eq!(w.puts.len(), 10_000, "one value per row");
    assert_bounded(&w);
    let largest = w.puts.iter().map(|(_, v)| v.len()).max().unwrap();
    assert!(largest * 64 < DO_VALUE_LIMIT, "largest row {largest} bytes");

    // A flush in flight adds its own sums to each row: still bounded.
    let batch = rows.batch(500, 1).unwrap();
    assert_eq!(batch.rows.len(), 500);
    for i in 0..500 {
        rows.add(&record(60_000, &end_user(i), &model));
    }
    assert_bounded(&rows.take_writes());

    // The spend of each end user is its own small value, whatever the number of end users.
    let mut spend = Spend::default();
    spend.add(1_700_000_000_000, 123_456.789_012_345);
    assert!(serde_json::to_string(&spend).unwrap().len() < 256);
    let meta = LedgerMeta {
        tenant: Some(TenantId::parse(&"t".repeat(63)).unwrap()),
        gate: GenerationGate {
            current: Some(u64::MAX),
            dead_through: Some(u64::MAX),
        },
        next_seq: u64::MAX,
        failures: u32::MAX,
    };
    assert!(serde_json::to_string(&meta).unwrap().len() < 512);

    // The layout this replaces: one value holding every row, far past the limit.
    let old = serde_json::to_string(&legacy).unwrap();
    assert!(old.len() > DO_VALUE_LIMIT, "old single value {}", old.len());
}

#[test]
fn rows_arriving_during_a_flush_stay_apart_from_the_sums_in_flight() {
    let mut rows = RollupRows::default();
    rows.add(&record(0, "u", "m"));
    let batch = rows.batch(10, 4).unwrap();
    assert_eq!((batch.seq, batch.rows.len()), (4, 1));
    rows.add(&record(1, "u", "m"));
    // A failed flush is sent again with the same number and the same sums.
    assert_eq!(rows.batch(10, 5), Some(batch.clone()));
    rows.flushed(4);
    let next = rows.batch(10, 5).unwrap();
    assert_eq!(next.seq, 5);
    assert_eq!(next.rows[0].1.requests, 1);
}

#[test]
fn after_a_restart_the_flush_in_flight_goes_again_under_its_own_number() {
    let mut rows = RollupRows::default();
    for u in ["a", "b", "c"] {
        rows.add(&record(0, u, "m"));
    }
    let sent = rows.batch(2, 9).unwrap();
    rows.add(&record(0, "a", "m"));
    let stored = rows.take_writes().puts;
    let (mut restarted, bad) = RollupRows::load(stored);
    assert_eq!(bad, 0);
    assert_eq!(restarted.batch(2, 10), Some(sent));
    restarted.flushed(9);
    let next = restarted.batch(10, 10).unwrap();
    assert_eq!(next.seq, 10);
    assert_eq!(next.rows.len(), 2, "c, and a's later request");
}

#[test]
fn a_flushed_row_with_nothing_left_is_deleted_from_storage() {
    let mut rows = RollupRows::default();
    rows.add(&record(0, "a", "m"));
    rows.add(&record(0, "b", "m"));
    rows.take_writes();
    let b = rows.batch(1, 0).unwrap();
    rows.flushed(b.seq);
    let w = rows.take_writes();
    assert_eq!(w.deletes.len(), 1);
    assert!(w.puts.is_empty());
    assert_eq!((rows.len(), rows.pending_rows()), (1, 1));
}

#[test]
fn a_flush_takes_at_most_its_share_and_the_legacy_value_is_folded_in() {
    let mut legacy = PendingRollups::default();
    for m in 0..5 {
        legacy.add(&record(m * 60_000, "u", "m"));
    }
    let mut rows = RollupRows::default();
    rows.absorb_legacy(legacy);
    assert_eq!(rows.batch(3, 0).unwrap().rows.len(), 3);
    assert_eq!(rows.pending_rows(), 2);
}

#[test]
fn a_stored_value_that_does_not_parse_is_dropped_not_fatal() {
    let (mut rows, bad) = RollupRows::load([("ru:x".to_owned(), "{".to_owned())]);
    assert_eq!(bad, 1);
    assert_eq!(rows.take_writes().deletes, ["ru:x"]);
}
