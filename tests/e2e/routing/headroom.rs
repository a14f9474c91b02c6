//! Credentials chosen by remaining quota on workerd: a mock whose keys report different headroom
//! in their rate-limit headers, `key_strategy: "most_remaining"` starting the next requests from
//! the key with the most left, and the provider's GET showing each key's headroom.

use crate::support::gateway::Gateway;
use cognigate::mock::{Reply, Rule};
use std::time::{SystemTime, UNIX_EPOCH};

fn left(remaining: &str) -> Reply {
    Reply::ok()
        .header("x-ratelimit-limit-requests", "100")
        .header("x-ratelimit-remaining-requests", remaining)
        .header("x-ratelimit-limit-tokens", "100000")
        .header("x-ratelimit-remaining-tokens", "90000")
}

#[test]
fn most_remaining_starts_the_next_requests_from_the_key_with_the_most_headroom() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("headroom", &["sk-a", "sk-b"], "most_remaining");
    mock.push(Rule::any(left("5")).key("sk-a"));
    mock.push(Rule::any(left("80")).key("sk-b"));
    // Nothing known yet: round-robin, so both keys answer once.
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(t.chat("m").status, 200);
    let mut first_two = mock.keys();
    first_two.sort();
    assert_eq!(first_two, ["sk-a", "sk-b"]);
    for _ in 0..4 {
        assert_eq!(t.chat("m").status, 200);
    }
    assert_eq!(
        mock.keys()[2..],
        ["sk-b", "sk-b", "sk-b", "sk-b"],
        "5% left on sk-a"
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let view = gw.admin("GET", &t.path("/providers/p"), None).json();
    assert_eq!(view["key_strategy"], "most_remaining");
    let keys = view["keys"].as_array().unwrap();
    assert_eq!(keys[0]["headroom"].as_f64(), Some(0.05), "{view}");
    assert_eq!(keys[1]["headroom"].as_f64(), Some(0.8), "{view}");
    for k in keys {
        let seen = k["headroom_seen_ms"].as_u64().unwrap();
        assert!(now.abs_diff(seen) < 30_000, "{view}");
    }
}

#[test]
fn round_robin_reads_headroom_too_and_keeps_rotating() {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock("headroom-rr", &["sk-a", "sk-b"], "round_robin");
    mock.push(Rule::any(left("5")).key("sk-a"));
    mock.push(Rule::any(left("80")).key("sk-b"));
    for _ in 0..4 {
        assert_eq!(t.chat("m").status, 200);
    }
    let used = mock.keys();
    assert_eq!(used.iter().filter(|k| *k == "sk-a").count(), 2, "{used:?}");
    let view = gw.admin("GET", &t.path("/providers/p"), None).json();
    assert_eq!(view["keys"][0]["headroom"].as_f64(), Some(0.05), "{view}");
}
