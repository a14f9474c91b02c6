//! Versions and pins end to end on workerd against mocks: the provider pin (`X-CogniGate-Pin-Provider`),
//! loose version matching and `prefer_newest_version`. "No upstream call" is the mock's own count.

use crate::support::gateway::{Gateway, Resp, Tenant};
use cognigate::mock::MockProvider;
use serde_json::{json, Value};

const PIN: &str = "X-CogniGate-Pin-Provider";

/// A POST with the caller's key and these extra headers.
fn post(t: &Tenant<'_>, path: &str, headers: &[(&str, &str)], body: &Value) -> Resp {
    t.post_with(path, body, headers)
}

/// The body each caller surface takes for `model`.
fn body(path: &str, model: &str) -> Value {
    match path {
        "/v1/responses" => json!({"model": model, "input": "hello"}),
        "/v1/messages" | "/v1/messages/count_tokens" => {
            json!({"model": model, "max_tokens": 16, "messages": [{"role": "user", "content": "hello"}]})
        }
        _ => json!({"model": model, "messages": [{"role": "user", "content": "hello"}]}),
    }
}

const SURFACES: [&str; 3] = ["/v1/chat/completions", "/v1/messages", "/v1/responses"];

/// Providers `p1` and `p2`, each on its own mock, with `m1` on p1 and `m2` on p2, and the rule
/// `app` → `[m1, m2]`.
fn two_providers<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider, MockProvider) {
    let (a, b) = (
        MockProvider::start("a").unwrap(),
        MockProvider::start("b").unwrap(),
    );
    let t = gw.tenant(hint);
    t.provider("p1", &a.url(), &["sk-a"], "failover");
    t.provider("p2", &b.url(), &["sk-b"], "failover");
    t.model("m1", "p1", 1.0, 8000);
    t.model("m2", "p2", 1.0, 8000);
    assert_eq!(t.rule("app", &["m1", "m2"]).status, 200);
    (t, a, b)
}

#[test]
fn a_pin_keeps_only_that_providers_candidates_and_the_other_provider_sees_no_call() {
    let gw = Gateway::shared();
    let (t, a, b) = two_providers(gw, "pin-keeps");
    for path in SURFACES {
        let r = post(&t, path, &[(PIN, "p2")], &body(path, "app"));
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        assert_eq!(r.header("x-cognigate-model"), Some("m2"), "{path}");
        assert_eq!(r.header("x-cognigate-provider"), Some("p2"), "{path}");
        assert_eq!(r.header("x-cognigate-fallback-depth"), Some("0"), "{path}");
    }
    assert_eq!((a.count(), b.count()), (0, 3));
    // Without the pin the chain starts at m1 as before.
    let r = post(&t, "/v1/chat/completions", &[], &body("", "app"));
    assert_eq!(r.header("x-cognigate-model"), Some("m1"), "{}", r.text);
}

#[test]
fn an_unknown_pin_is_400_unknown_provider_in_each_surfaces_shape_with_no_upstream_call() {
    let gw = Gateway::shared();
    let (t, a, b) = two_providers(gw, "pin-unknown");
    for path in ["/v1/chat/completions", "/v1/responses"] {
        let r = post(&t, path, &[(PIN, "anthropic")], &body(path, "app"));
        assert_eq!(r.status, 400, "{path}: {}", r.text);
        let e = &r.json()["error"];
        assert_eq!(e["type"], "invalid_request_error", "{path}");
        assert_eq!(e["code"], "unknown_provider", "{path}");
        assert_eq!(e["param"], PIN, "{path}");
        assert!(
            e["message"].as_str().unwrap().contains("'anthropic'"),
            "{e}"
        );
    }
    for path in ["/v1/messages", "/v1/messages/count_tokens"] {
        let r = post(&t, path, &[(PIN, "anthropic")], &body(path, "app"));
        assert_eq!(r.status, 400, "{path}: {}", r.text);
        let v = r.json();
        assert_eq!(v["type"], "error", "{path}: Anthropic's shape");
        assert_eq!(v["error"]["type"], "invalid_request_error", "{path}");
    }
    assert_eq!((a.count(), b.count()), (0, 0));
}

#[test]
fn a_pin_that_leaves_no_candidate_is_503_no_candidates_naming_the_pin() {
    let gw = Gateway::shared();
    let (t, a, b) = two_providers(gw, "pin-empty");
    let r = post(&t, "/v1/chat/completions", &[(PIN, "p2")], &body("", "m1"));
    assert_eq!(r.status, 503, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("no_candidates"));
    let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("X-CogniGate-Pin-Provider 'p2' leaves no candidate"),
        "{message}"
    );
    let counted = post(
        &t,
        "/v1/messages/count_tokens",
        &[(PIN, "p2")],
        &body("/v1/messages", "m1"),
    );
    assert_eq!(counted.status, 503, "{}", counted.text);
    assert_eq!((a.count(), b.count()), (0, 0));
}

/// A tenant with provider `p` on one mock and these model ids on it.
fn catalog<'g>(gw: &'g Gateway, hint: &str, ids: &[&str]) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    for id in ids {
        t.model(id, "p", 1.0, 8000);
    }
    (t, mock)
}

#[test]
fn claude_haiku_4_5_reaches_claude_haiku_4_5_20251001_and_claude_haiku_5_stays_404() {
    let gw = Gateway::shared();
    let (t, mock) = catalog(gw, "loose", &["claude-haiku-4-5-20251001"]);
    for path in SURFACES {
        let r = post(&t, path, &[], &body(path, "claude-haiku-4-5"));
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        assert_eq!(
            r.header("x-cognigate-model"),
            Some("claude-haiku-4-5-20251001"),
            "{path}"
        );
    }
    let sent: Vec<Option<String>> = mock.calls().into_iter().map(|c| c.model).collect();
    assert!(
        sent.iter()
            .all(|m| m.as_deref() == Some("claude-haiku-4-5-20251001")),
        "{sent:?}"
    );
    for name in ["claude-haiku-5", "claude-haiku-4", "claude-sonnet-4-5"] {
        let r = post(&t, "/v1/chat/completions", &[], &body("", name));
        assert_eq!(r.status, 404, "{name}: {}", r.text);
        assert_eq!(r.error_code().as_deref(), Some("model_not_found"));
    }
    assert_eq!(mock.count(), 3);
}

#[test]
fn the_newest_of_two_dated_ids_wins_and_an_exact_id_still_wins() {
    let gw = Gateway::shared();
    let (t, _mock) = catalog(
        gw,
        "newest",
        &[
            "claude-haiku-4-5-20251001",
            "claude-haiku-4-5@20260115",
            "claude-haiku-4-5-2025-03-01",
        ],
    );
    let served = |name: &str| {
        let r = post(&t, "/v1/chat/completions", &[], &body("", name));
        assert_eq!(r.status, 200, "{name}: {}", r.text);
        r.header("x-cognigate-model").unwrap().to_owned()
    };
    assert_eq!(served("claude-haiku-4-5"), "claude-haiku-4-5@20260115");
    assert_eq!(
        served("claude-haiku-4-5-20251001"),
        "claude-haiku-4-5-20251001"
    );
    // The same date in another spelling is that version; another date, the newest.
    assert_eq!(
        served("claude-haiku-4-5@20250301"),
        "claude-haiku-4-5-2025-03-01"
    );
    assert_eq!(
        served("claude-haiku-4-5-20240101"),
        "claude-haiku-4-5@20260115"
    );
}

#[test]
fn prefer_newest_version_orders_dated_models_first_ahead_of_the_price_order() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("prefer-newest").unwrap();
    let t = gw.tenant("prefer-newest");
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    t.model("plain", "p", 0.1, 8000);
    t.model("m-20240101", "p", 1.0, 8000);
    t.model("m-20251001", "p", 5.0, 8000);
    t.put_ok(
        "/aliases/cheap",
        json!({"capabilities": ["chat"], "cost_tier": "cheapest"}),
    );
    let r = t.put_ok(
        "/aliases/latest",
        json!({"capabilities": ["chat"], "cost_tier": "cheapest", "prefer_newest_version": true}),
    );
    assert_eq!(r.json()["prefer_newest_version"], true, "{}", r.text);
    let served = |name: &str| {
        let r = post(&t, "/v1/chat/completions", &[], &body("", name));
        assert_eq!(r.status, 200, "{name}: {}", r.text);
        r.header("x-cognigate-model").unwrap().to_owned()
    };
    assert_eq!(served("cheap"), "plain");
    assert_eq!(served("latest"), "m-20251001");
    // A ranked alias too: the newest dated model goes ahead of its axis.
    t.put_ok(
        "/aliases/quick",
        json!({"capabilities": ["chat"], "rank_by": "latency", "prefer_newest_version": true}),
    );
    assert_eq!(served("quick"), "m-20251001");
}
