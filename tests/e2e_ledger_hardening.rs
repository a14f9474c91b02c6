//! The ledger's settlements across restarts: a settle that arrives again after the ledger object
//! restarted is not counted twice. The built worker on workerd, against the mock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use cognigate::mock::MockProvider;
use serde_json::{json, Value};
use std::time::Duration;
use support::gateway::{eventually, Gateway, Tenant};

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
