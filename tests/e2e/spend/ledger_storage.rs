//! The ledger's storage: roll-ups of many distinct end users all reach the usage API,
//! a flush is never counted twice across a restart, and usage of a deleted tenant never lands
//! in one created again under the same id. The built worker on workerd, against the mock.

use crate::support::gateway::{eventually, Gateway, Tenant};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// This module's own gateway, as when each file was a test binary: the storage check reads the
/// largest value of every ledger object, so it must hold this module's ledgers only.
fn gateway() -> &'static Gateway {
    static GW: OnceLock<Gateway> = OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[]))
}

/// Records reach the ledger within a second and the flush alarm follows within 2 s; a backlog
/// of rows drains 500 a flush.
const SETTLED: Duration = Duration::from_secs(30);

/// One mock answer is 5 + 7 tokens; at $100 per million each way it costs $0.0012.
const ANSWER_USD: f64 = 0.0012;

fn key_spend(t: &Tenant<'_>) -> f64 {
    let keys = t.gw.admin("GET", &t.path("/api-keys"), None).json();
    keys["data"][0]["spend"]["usd"].as_f64().unwrap_or(-1.0)
}

/// A 128-byte end user id, distinct per `i`.
fn end_user(i: usize) -> String {
    let id = format!("user-{i:06}-");
    format!("{id}{}", "x".repeat(128 - id.len()))
}

/// The largest value any ledger object holds in storage right now, read from the runtime's own
/// SQLite files under the gateway's state directory (`None` until there is one to read).
fn largest_ledger_value(gw: &Gateway) -> Option<u64> {
    let mut largest = None;
    let dirs = std::fs::read_dir(gw.state_dir.join("do")).ok()?;
    for dir in dirs.flatten() {
        if !dir.file_name().to_string_lossy().contains("LedgerObject") {
            continue;
        }
        for file in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = file.path();
            if path.extension().is_none_or(|e| e != "sqlite") {
                continue;
            }
            let out = std::process::Command::new("sqlite3")
                .arg("-readonly")
                .arg(&path)
                .arg("SELECT coalesce(max(length(value)), 0) FROM _cf_KV")
                .output()
                .expect("sqlite3 (the runtime's storage is SQLite)");
            let text = String::from_utf8_lossy(&out.stdout);
            if let Ok(n) = text.trim().parse::<u64>() {
                largest = Some(largest.unwrap_or(0).max(n));
            }
        }
    }
    largest
}

fn chat_as(t: &Tenant<'_>, user: &str) -> u16 {
    let body = json!({"model": "m", "user": user, "messages": [{"role": "user", "content": "hi"}]});
    t.gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&t.key),
        Some(&body.to_string()),
    )
    .status
}

#[test]
fn requests_from_2500_distinct_128_byte_end_users_in_one_minute_all_appear_in_usage_and_key_spend()
{
    const USERS: usize = 2_500;
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("many-users", &["sk-1"], "round_robin");
    t.model("m", "p", 100.0, 8000);
    // End-user limits make the ledger keep each end user's spend as well as its roll-up row.
    t.put_ok("/settings", json!({"end_user": {"rpm": 1000}}));

    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicBool::new(false);
    let mut peak = None;
    std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut peak: Option<u64> = None;
            while !done.load(Ordering::SeqCst) {
                if let Some(n) = largest_ledger_value(gw) {
                    peak = Some(peak.unwrap_or(0).max(n));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            peak
        });
        let senders: Vec<_> = (0..16)
            .map(|_| {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= USERS {
                        return;
                    }
                    if chat_as(&t, &end_user(i)) != 200 {
                        failed.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for sender in senders {
            sender.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        peak = sampler.join().unwrap();
    });
    assert_eq!(failed.load(Ordering::SeqCst), 0, "every request served");
    // Every value stays a row's size, far under the runtime's 128 KiB per value (which the
    // local runtime does not enforce, so it is checked here); one value of every pending row
    // would be hundreds of KiB by now.
    let peak = peak.expect("the ledger's storage was read");
    eprintln!(
        "largest ledger value {peak} bytes; sent in {:?}",
        started.elapsed()
    );
    assert!(peak < 4 * 1024, "largest stored ledger value: {peak} bytes");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "sent within one minute ({:?})",
        started.elapsed()
    );

    let mut total = Value::Null;
    let complete = Instant::now();
    while complete.elapsed() < SETTLED {
        total = t.usage("user")["total"].take();
        if total["requests"] == USERS {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(total["requests"], USERS, "usage total: {total}");
    let cost = total["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - USERS as f64 * ANSWER_USD).abs() < 1e-6,
        "usage cost {cost}"
    );
    let spend = key_spend(&t);
    assert!(
        (spend - cost).abs() < 1e-9,
        "key spend {spend} vs usage {cost}"
    );
    let log = gw.log_containing(&t.id);
    assert!(
        !log.contains("not settled") && !log.contains("not flushed"),
        "no lost hand-off or flush: {log}"
    );
}

#[test]
fn usage_settling_after_its_tenant_was_deleted_never_lands_in_a_re_created_tenant_of_the_same_id() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("regen", &["sk-1"], "round_robin");
    t.model("m", "p", 100.0, 8000);
    // The key has no limits: its record waits about a second in the isolate before it goes to
    // the ledger, so it settles after the tenant is gone.
    assert_eq!(chat_as(&t, "late"), 200);
    let again = t.recreated();
    let mock = cognigate::mock::MockProvider::start("regen-again").unwrap();
    again.provider("p", &mock.url(), &["sk-1"], "round_robin");
    again.model("m", "p", 100.0, 8000);
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(chat_as(&again, "fresh"), 200);

    eventually("the re-created tenant's own request", SETTLED, || {
        again.usage("user")["total"]["requests"] == 1
    });
    // Its flush came after the late record's: had the late one landed, it would show by now.
    std::thread::sleep(Duration::from_secs(3));
    let total = again.usage("user")["total"].take();
    assert_eq!(total["requests"], 1, "only the new tenant's usage: {total}");
    assert!((key_spend(&again) - ANSWER_USD).abs() < 1e-9);
}

/// A restart that lands between D1 applying a flush and the ledger forgetting its rows sends
/// the same flush again under the same number. D1 is told here that the ledger's first flush
/// (number 0) was applied already, as if it had been before a restart: sending it adds nothing,
/// and the next flush is applied as usual.
#[test]
fn a_flush_whose_number_d1_already_applied_is_not_counted_twice() {
    let gw = gateway();
    let (t, _mock) = gw.tenant_with_mock("replayed", &["sk-1"], "round_robin");
    t.model("m", "p", 100.0, 8000);
    let generation = gw.sql(
        "SELECT generation FROM tenants WHERE id = ?1",
        &[json!(t.id)],
    )[0]["generation"]
        .clone();
    gw.sql(
        "INSERT INTO usage_flushes (tenant_id, generation, last_flush) VALUES (?1, ?2, 0)",
        &[json!(t.id), generation],
    );
    assert_eq!(chat_as(&t, "first"), 200);
    // The flush of the first request is number 0: already applied, so it adds nothing.
    // One second in the isolate, two before the alarm, and a margin.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(
        t.usage("user")["total"]["requests"],
        0,
        "flush 0 applied once only"
    );
    assert_eq!(chat_as(&t, "second"), 200);
    eventually("the second flush", SETTLED, || {
        t.usage("user")["total"]["requests"] == 1
    });
    let flushes = gw.sql(
        "SELECT last_flush FROM usage_flushes WHERE tenant_id = ?1",
        &[json!(t.id)],
    );
    assert_eq!(flushes[0]["last_flush"], 1, "{flushes:?}");
}

/// D1 refuses flushes for a while (its table is renamed away on a private gateway): the ledger
/// retries 2 s after the first failure, then 4 s, 8 s, … up to a minute, rather than every 2 s,
/// and the usage lands once D1 is back, counted once.
#[test]
fn a_failed_flush_retries_with_backoff_and_lands_once_d1_is_back() {
    let gw = Gateway::start(&[]);
    let (t, _mock) = gw.tenant_with_mock("retry", &["sk-1"], "round_robin");
    t.model("m", "p", 100.0, 8000);
    gw.sql(
        "ALTER TABLE usage_rollups RENAME TO usage_rollups_away",
        &[],
    );
    assert_eq!(chat_as(&t, "u"), 200);
    let failures = || {
        gw.log_containing(&t.id)
            .matches("roll-ups not flushed")
            .count()
    };
    eventually("a failed flush", SETTLED, || failures() > 0);
    // Tries 0, 2 and 6 s after the first failure (the next at 14 s); every 2 s would be six.
    std::thread::sleep(Duration::from_secs(11));
    let tries = failures();
    assert!((2..=4).contains(&tries), "{tries} failed flushes in 11 s");
    gw.sql(
        "ALTER TABLE usage_rollups_away RENAME TO usage_rollups",
        &[],
    );
    eventually("the retried flush", SETTLED, || {
        t.usage("user")["total"]["requests"] == 1
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(t.usage("user")["total"]["requests"], 1, "counted once");
}
