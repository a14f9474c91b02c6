//! Credentials chosen by remaining quota on workerd: a mock whose keys report different headroom
//! in their rate-limit headers, `key_strategy: "most_remaining"` starting the next requests from
//! the key with the most left, and the provider's GET showing each key's headroom.

use crate::support::gateway::Gateway;
use crate::support::tenant::Tenant;
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

/// Two models on two providers; `p`'s key reports `p_left` of 100 requests left.
fn two_providers<'g>(gw: &'g Gateway, hint: &str, p_left: &str) -> Tenant<'g> {
    let scarce = cognigate::mock::MockProvider::start(hint).unwrap();
    let plenty = cognigate::mock::MockProvider::start(&format!("{hint}-b")).unwrap();
    scarce.push(Rule::any(left(p_left)));
    plenty.push(Rule::any(left("90")));
    let t = gw.tenant(hint);
    t.provider("p", &scarce.url(), &["sk-p"], "round_robin");
    t.provider("b", &plenty.url(), &["sk-b"], "round_robin");
    t.model("a-scarce", "p", 1.0, 8000);
    t.model("b-plenty", "b", 1.0, 8000);
    assert_eq!(t.chat("a-scarce").status, 200);
    assert_eq!(t.chat("b-plenty").status, 200);
    // The mocks stop here: what follows reads only routing state.
    t
}

fn candidate(out: &serde_json::Value, model: &str) -> serde_json::Value {
    let all = out["candidates"].as_array().unwrap();
    all.iter().find(|c| c["model"] == model).unwrap().clone()
}

#[test]
fn explain_shows_each_ranked_candidates_headroom_and_factor() {
    let gw = Gateway::shared();
    let t = two_providers(gw, "headroom-rank", "2");
    // The admin stats read sends this isolate's pending outcomes and figures to the objects,
    // which explain reads.
    assert_eq!(gw.admin("GET", &t.path("/stats"), None).status, 200);
    let explain = |q: &str| {
        gw.admin("GET", &t.path(&format!("/explain?{q}")), None)
            .json()
    };
    let out = explain("model=auto:balanced");
    let scarce = candidate(&out, "a-scarce");
    assert_eq!(scarce["stats"]["headroom"].as_f64(), Some(0.02), "{out}");
    assert_eq!(
        scarce["stats"]["headroom_factor"].as_f64(),
        Some(0.6),
        "{out}"
    );
    let plenty = candidate(&out, "b-plenty");
    assert_eq!(
        plenty["stats"]["headroom_factor"].as_f64(),
        Some(1.0),
        "{out}"
    );
    // A threshold of 0 turns the factor off.
    t.put_ok("/settings", serde_json::json!({"headroom_threshold": 0}));
    let off = explain("model=auto:balanced");
    assert_eq!(
        candidate(&off, "a-scarce")["stats"]["headroom_factor"].as_f64(),
        Some(1.0)
    );
}
