//! Host tests of one model's live stats: the EWMAs, the success window and the cached share.

use super::*;

fn served(ms: u64) -> Sample {
    Sample::Served {
        ttfb_ms: ms / 2,
        latency_ms: Some(ms),
    }
}

#[test]
fn the_first_sample_sets_the_ewma_and_each_later_one_weighs_0_3() {
    let mut s = ModelStats::default();
    let mut b = OutcomeBatch::default();
    b.add(served(100));
    s.fold(&b, 0);
    assert_eq!(s.latency_ms, Some(100.0));
    let mut b = OutcomeBatch::default();
    b.add(served(200));
    s.fold(&b, 1);
    assert!((s.latency_ms.unwrap() - 130.0).abs() < 1e-9);
}

#[test]
fn a_batch_moves_the_ewma_as_its_samples_would_one_by_one_at_their_mean() {
    let (mut one_by_one, mut batched) = (ModelStats::default(), ModelStats::default());
    let mut all = OutcomeBatch::default();
    for _ in 0..4 {
        let mut b = OutcomeBatch::default();
        b.add(served(50));
        one_by_one.fold(&b, 0);
        all.add(served(50));
    }
    batched.fold(&all, 0);
    assert_eq!(one_by_one.latency_ms, batched.latency_ms);
    assert_eq!(one_by_one.requests, 4);
    assert_eq!(batched.requests, 4);
}

#[test]
fn the_success_ratio_counts_successes_and_counted_failures_of_the_last_five_minutes() {
    let mut s = ModelStats::default();
    let mut b = OutcomeBatch::default();
    b.add(served(10));
    b.add(Sample::Failed { counted: true });
    b.add(Sample::Failed { counted: false });
    s.fold(&b, 0);
    assert_eq!(
        s.success_rate(0),
        Some(0.5),
        "an uncounted failure is left out"
    );
    assert_eq!(s.requests, 3);
    assert_eq!(s.success_rate(4 * WINDOW_BUCKET_MS), Some(0.5));
    assert_eq!(
        s.success_rate(5 * WINDOW_BUCKET_MS),
        None,
        "out of the window"
    );
    let mut b = OutcomeBatch::default();
    b.add(served(10));
    s.fold(&b, 6 * WINDOW_BUCKET_MS);
    assert_eq!(s.success_rate(6 * WINDOW_BUCKET_MS), Some(1.0));
    assert_eq!(s.window.len(), 1, "expired buckets are dropped");
}

#[test]
fn a_stream_counts_as_served_at_its_start_and_adds_its_total_time_at_its_end() {
    let mut b = OutcomeBatch::default();
    b.add(Sample::Served {
        ttfb_ms: 20,
        latency_ms: None,
    });
    b.add(Sample::Finished { latency_ms: 400 });
    let mut s = ModelStats::default();
    s.fold(&b, 0);
    assert_eq!((s.requests, s.successes), (1, 1));
    assert_eq!(s.ttfb_ms, Some(20.0));
    assert_eq!(s.latency_ms, Some(400.0));
}

fn tokens(prompt: u64, cached: u64) -> OutcomeBatch {
    let mut b = OutcomeBatch::default();
    b.add(Sample::Tokens { prompt, cached });
    b
}

#[test]
fn the_cached_share_is_cache_reads_over_prompt_tokens_in_the_window_and_none_until_measured() {
    let mut s = ModelStats::default();
    assert_eq!(s.cached_share(0), None, "nothing measured");
    let mut served_only = OutcomeBatch::default();
    served_only.add(served(10));
    s.fold(&served_only, 0);
    assert_eq!(s.cached_share(0), None, "served, but no usage reported yet");
    assert!(
        !tokens(100, 80).is_empty(),
        "a batch of tokens alone is sent"
    );
    s.fold(&tokens(100, 80), 0);
    s.fold(&tokens(300, 0), WINDOW_BUCKET_MS);
    assert_eq!(s.cached_share(WINDOW_BUCKET_MS), Some(0.2));
    assert_eq!(s.requests, 1, "tokens add no request");
    assert_eq!(s.health(WINDOW_BUCKET_MS).cached_share, Some(0.2));
    assert_eq!(
        s.cached_share(5 * WINDOW_BUCKET_MS),
        Some(0.0),
        "the first bucket left the window"
    );
    assert_eq!(s.cached_share(6 * WINDOW_BUCKET_MS), None);
}

#[test]
fn token_counts_merge_and_an_older_sides_batch_without_them_still_reads() {
    let mut b = tokens(100, 40);
    b.merge(&tokens(50, 10));
    assert_eq!((b.prompt_tokens, b.cached_tokens), (150, 50));
    let old: OutcomeBatch = serde_json::from_str(
        r#"{"requests":1,"successes":1,"failures":0,"latency_sum_ms":5,"latency_n":1,"ttfb_sum_ms":5,"ttfb_n":1}"#,
    )
    .unwrap();
    assert_eq!(old.prompt_tokens, 0);
    let json = serde_json::to_string(&old).unwrap();
    assert!(
        !json.contains("prompt_tokens"),
        "zero sums stay off the wire: {json}"
    );
}
