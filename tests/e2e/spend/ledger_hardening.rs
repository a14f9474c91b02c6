//! The ledger's holds and settlements under time and restarts: a stream that outlives the first
//! lifetime of its reservation still holds it against the budget while it runs, and a settle
//! that arrives again after the ledger object restarted is not counted twice. The built worker
//! on workerd, against the mock.

use crate::support::gateway::{eventually, Gateway, Tenant};
use cognigate::mock::{chunk_event, MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};
use std::io::Read;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// This module's own gateway, as when each file was a test binary: the check that no hold was
/// released unsettled reads the whole worker log.
fn gateway() -> &'static Gateway {
    static GW: OnceLock<Gateway> = OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[]))
}

/// Records reach the ledger within a second and the flush alarm follows within 2 s.
const SETTLED: Duration = Duration::from_secs(30);

/// One mock answer is 5 + 7 tokens; at $100 per million each way it costs $0.0012.
const ANSWER_USD: f64 = 0.0012;

fn key_spend(t: &Tenant<'_>, key_id: &str) -> f64 {
    let keys = t.gw.admin("GET", &t.path("/api-keys"), None).json();
    keys["data"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|k| k["id"] == key_id)
        .and_then(|k| k["spend"]["usd"].as_f64())
        .unwrap_or(-1.0)
}

/// A stream that sends one chunk every 2 s (well inside the provider's 5 s read timeout) for
/// `secs` seconds, then ends. It reports no usage: it is charged its estimate.
fn long_stream(secs: u64) -> Reply {
    let mut steps = vec![Step::Data(chunk_event("m", "start "))];
    for _ in 0..secs / 2 {
        steps.push(Step::Sleep(2_000));
        steps.push(Step::Data(chunk_event("m", "more ")));
    }
    steps.push(Step::Data("[DONE]".into()));
    Reply::stream(steps)
}

/// Reads a whole streamed answer with a client that waits longer than the stream lasts (the
/// shared agent gives up after 60 s, which would end the stream as a cancel); its status, body
/// and how long it took.
fn stream_whole(gw_url: String, key: String, body: String) -> (u16, String, Duration) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(300)))
        .max_idle_connections(0)
        .build()
        .into();
    let started = Instant::now();
    let req = ureq::http::Request::builder()
        .method("POST")
        .uri(format!("{gw_url}/v1/chat/completions"))
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {key}"))
        .body(body)
        .unwrap();
    let resp = agent.run(req).expect("gateway reachable");
    let status = resp.status().as_u16();
    let mut text = String::new();
    let _ = resp.into_body().into_reader().read_to_string(&mut text);
    (status, text, started.elapsed())
}

/// A budget that one answer's reservation fills; one stream that runs `stream_secs`, and a
/// second request sent `second_at_secs` after it, past the reservation's first lifetime
/// (`REQUEST_BUDGET_MS` + 10 s): the second is refused with the budget error. Once the stream
/// ended, its hold is replaced by its one charge.
fn a_long_stream_holds_its_reservation_until_it_ends(
    gw: &Gateway,
    hint: &str,
    stream_secs: u64,
    second_at_secs: u64,
) {
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1"], "round_robin");
    t.model("m", "p", 100.0, 8000);
    // Reservation: the prompt estimate plus 200 max_tokens at $100 per million, over $0.02; the
    // stream's charge (its estimate: a few dozen tokens) is far below the budget.
    let (key_id, key) = t.key_with(json!({"budget": {"usd": 0.01, "period": "day"}}));
    mock.push(Rule::any(long_stream(stream_secs)).times(1));
    let body = json!({
        "model": "m", "stream": true, "max_tokens": 200,
        "messages": [{"role": "user", "content": "tell me a long story"}],
    })
    .to_string();
    let started = Instant::now();
    let stream = {
        let (url, key) = (gw.url.clone(), key.clone());
        std::thread::spawn(move || stream_whole(url, key, body))
    };
    std::thread::sleep(Duration::from_secs(second_at_secs).saturating_sub(started.elapsed()));
    let plain =
        json!({"model": "m", "max_tokens": 7, "messages": [{"role": "user", "content": "hi"}]});
    let second = gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&key),
        Some(&plain.to_string()),
    );
    let at = started.elapsed();
    assert_eq!(
        (second.status, second.error_code().as_deref()),
        (402, Some("budget_exceeded")),
        "a request {at:?} into a running stream meets its hold: {}",
        second.text
    );
    assert_eq!(mock.count(), 1, "the refused request made no upstream call");

    let (status, text, took) = stream.join().unwrap();
    assert_eq!(status, 200);
    assert!(text.contains("[DONE]"), "the stream ran to its end: {text}");
    assert!(
        took >= Duration::from_secs(stream_secs),
        "the stream lasted {took:?}"
    );
    // Settled once: the hold is replaced by the stream's one charge, which leaves room.
    let record = gw.usage_records(&t.id, 1, SETTLED).remove(0);
    let charged = record["cost_usd"].as_f64().unwrap();
    assert!(charged > 0.0 && charged < 0.01, "{record}");
    eventually("the stream's charge in the key's spend", SETTLED, || {
        (key_spend(&t, &key_id) - charged).abs() < 1e-9
    });
    let third = gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&key),
        Some(&plain.to_string()),
    );
    assert_eq!(
        third.status, 200,
        "the ended stream holds nothing: {}",
        third.text
    );
    let log = gw.log_containing(&t.id);
    assert!(
        !log.contains("reservation released unsettled"),
        "no hold of the running stream was released by its timer"
    );
}

#[test]
fn a_stream_of_80_s_still_holds_its_budget_reservation_when_a_second_request_comes_at_75_s() {
    a_long_stream_holds_its_reservation_until_it_ends(gateway(), "long-stream", 80, 75);
}

/// The same rule with `REQUEST_BUDGET_MS` at 5 s: the hold's lifetime is 15 s, and the stream
/// renews it several times before the second request comes.
#[test]
fn a_stream_renews_its_reservation_as_often_as_it_outlives_it() {
    let gw = Gateway::start(&[("REQUEST_BUDGET_MS", "5000")]);
    a_long_stream_holds_its_reservation_until_it_ends(&gw, "renewed-stream", 40, 35);
}

#[test]
fn a_settle_arriving_again_after_the_ledger_object_restarted_is_counted_once() {
    let gw = Gateway::start_durable();
    let mock = MockProvider::start("settle-restart").unwrap();
    let (tenant, key, record) = {
        let t = gw.tenant("settle-restart");
        t.provider("p", &mock.url(), &["sk-1"], "round_robin");
        t.model("m", "p", 100.0, 8000);
        assert_eq!(t.chat("m").status, 200);
        let mut record = gw.usage_records(&t.id, 1, SETTLED).remove(0);
        record.as_object_mut().unwrap().remove("msg");
        eventually("the request settled", SETTLED, || {
            t.usage("user")["total"]["requests"] == 1
        });
        (t.id.clone(), t.key.clone(), record)
    };
    let key_id = record["key_id"].as_str().unwrap().to_owned();
    // Every object is evicted; the ledger's memory is gone, its storage kept.
    let gw = gw.restart();
    let t = Tenant {
        gw: &gw,
        id: tenant,
        key,
    };
    assert!((key_spend(&t, &key_id) - ANSWER_USD).abs() < 1e-9);
    // The isolate's retry of a settle whose answer was lost: the same record again.
    let entry: Value = json!([{"record": record, "track_end_user": false}]);
    let (status, text) = gw.ledger(&t.id, "/settle", &entry.to_string());
    assert_eq!(status, 200, "{text}");
    let spend = key_spend(&t, &key_id);
    assert!(
        (spend - ANSWER_USD).abs() < 1e-9,
        "the key spent one answer, not {spend}"
    );
    // A flush would follow within 3 s of a settle that added anything.
    std::thread::sleep(Duration::from_secs(5));
    let total = t.usage("user")["total"].take();
    assert_eq!(
        total["requests"], 1,
        "usage counts the request once: {total}"
    );
}
