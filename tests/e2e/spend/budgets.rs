//! Budgets and `tpm` hold under concurrency. Admission reserves each request's
//! estimate (prompt bytes / 4 plus `max_tokens`, at the chain's dearest prices) until its
//! record settles, so a burst cannot all pass a limit that only a few of its requests fit.

use crate::support::gateway::{Gateway, Tenant};
use cognigate::mock::Reply;
use serde_json::json;
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Sends `n` requests at once (each with `max_tokens`: 7, what the mock answers) and returns
/// their statuses.
fn burst(gw: &'static Gateway, key: &str, n: usize) -> Vec<u16> {
    let body = json!({
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 7,
    })
    .to_string();
    let start = Arc::new(Barrier::new(n));
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let (start, key, body) = (start.clone(), key.to_owned(), body.clone());
            std::thread::spawn(move || {
                start.wait();
                gw.request("POST", "/v1/chat/completions", Some(&key), Some(&body))
                    .status
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// Every answer (5 prompt + 7 completion tokens at $100 per million each way) costs $0.0012
/// and arrives after 500 ms, so a burst is all in flight before anything settles. The
/// reservation of each request: ceil(32 bytes of messages / 4) = 8 tokens + `max_tokens` 7 =
/// 15 tokens, $0.0015: never below what the answer costs.
fn slow_priced_tenant(hint: &str) -> (Tenant<'static>, cognigate::mock::MockProvider) {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1"], "round_robin");
    t.model("m", "p", 100.0, 8000);
    mock.set_default(Reply::ok().delay(500));
    (t, mock)
}

#[test]
fn thirty_two_concurrent_requests_on_a_key_with_a_budget_worth_5_answers_are_served_at_most_7_times(
) {
    let (t, mock) = slow_priced_tenant("burst-budget");
    let (_, key) = t.key_with(json!({"budget": {"usd": 0.006, "period": "day"}}));
    let statuses = burst(t.gw, &key, 32);
    let served = statuses.iter().filter(|s| **s == 200).count();
    assert!((1..=7).contains(&served), "served {served}: {statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 402),
        "{statuses:?}"
    );
    assert_eq!(
        mock.count(),
        served,
        "a refused request makes no upstream call"
    );
}

#[test]
fn thirty_two_concurrent_requests_on_a_key_with_a_tpm_worth_5_answers_are_served_at_most_7_times() {
    let (t, mock) = slow_priced_tenant("burst-tpm");
    // Five answers are 60 tokens; five reservations are 75.
    let (_, key) = t.key_with(json!({"tpm": 75}));
    let statuses = burst(t.gw, &key, 32);
    let served = statuses.iter().filter(|s| **s == 200).count();
    assert!((1..=7).contains(&served), "served {served}: {statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    assert_eq!(mock.count(), served);
}

#[test]
fn a_warm_limited_key_is_admitted_from_its_slice_with_no_round_trip_and_every_answer_is_charged() {
    let gw = Gateway::shared();
    let (t, _mock) = gw.tenant_with_mock("slice-spend", &["sk-1"], "round_robin");
    t.model("m", "p", 100.0, 8000);
    let (id, key) = t.key_with(json!({"rpm": 100000, "budget": {"usd": 1000, "period": "day"}}));
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).to_string();
    let mut round_trips = 0;
    for i in 0..20 {
        let r = gw.request("POST", "/v1/chat/completions", Some(&key), Some(&body));
        assert_eq!(r.status, 200, "{}", r.text);
        let calls: u64 = r.header("x-cognigate-do-calls").unwrap().parse().unwrap();
        if i >= 2 {
            round_trips += calls;
        }
    }
    assert_eq!(round_trips, 0, "warm requests are admitted from the slice");
    // Each answer costs $0.0012; the records go to the ledger in the isolate's batch.
    crate::support::gateway::eventually("every answer charged", Duration::from_secs(10), || {
        (t.key_spend(&id) - 20.0 * 0.0012).abs() < 1e-9
    });
}
