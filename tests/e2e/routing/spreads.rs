//! Weighted spreads and prompt-cache affinity, end to end: a chain entry
//! `{"spread": [...]}` draws one member per request by weight among those whose breaker is not
//! open, and a name with `cache_affinity_s` keeps a conversation on the model that served it.

use crate::support::gateway::{Gateway, Resp, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};

/// A tenant whose models `m1` and `m2` are on providers `p1` and `p2`, each on its own mock.
fn two_models<'g>(gw: &'g Gateway, hint: &str) -> (Tenant<'g>, MockProvider, MockProvider) {
    let (a, b) = (
        MockProvider::start("a").unwrap(),
        MockProvider::start("b").unwrap(),
    );
    let t = gw.tenant(hint);
    t.provider("p1", &a.url(), &["sk-a"], "failover");
    t.provider("p2", &b.url(), &["sk-b"], "failover");
    t.model("m1", "p1", 1.0, 8000);
    t.model("m2", "p2", 1.0, 8000);
    (t, a, b)
}

fn spread(w1: u32, w2: u32) -> Value {
    json!({"spread": [{"model": "m1", "weight": w1}, {"model": "m2", "weight": w2}]})
}

/// `n` chat requests for `model`, eight at a time; the serving model of each.
fn served_by(t: &Tenant<'_>, model: &str, n: usize) -> Vec<String> {
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|w| {
                s.spawn(move || {
                    (w..n)
                        .step_by(8)
                        .map(|_| {
                            let r = t.chat(model);
                            assert_eq!(r.status, 200, "{}", r.text);
                            r.header("x-cognigate-model").unwrap().to_owned()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    })
}

#[test]
fn a_three_to_one_spread_lands_250_to_350_of_400_requests_on_m1() {
    let gw = Gateway::shared();
    let (t, a, b) = two_models(gw, "spread31");
    t.put_ok(
        "/routing-rules",
        json!({"match": "app", "chain": [spread(3, 1)]}),
    );
    let served = served_by(&t, "app", 400);
    let on_m1 = served.iter().filter(|m| *m == "m1").count();
    assert!((250..=350).contains(&on_m1), "{on_m1} of 400 on m1");
    assert_eq!(
        served.len() - on_m1,
        served.iter().filter(|m| *m == "m2").count()
    );
    assert_eq!((a.count(), b.count()), (on_m1, 400 - on_m1));
}

#[test]
fn a_member_with_an_open_breaker_gets_none() {
    let gw = Gateway::shared();
    let (t, a, b) = two_models(gw, "spreadopen");
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": 60000}}),
    );
    t.put_ok(
        "/routing-rules",
        json!({"match": "app", "chain": [spread(3, 1)]}),
    );
    a.push(Rule::any(Reply::status(503)).model("m1").times(5));
    for _ in 0..5 {
        assert_eq!(t.chat("m1").status, 502);
    }
    assert_eq!(a.count(), 5);
    // Every request draws m2 (no position yields nothing), and m1's upstream sees no call.
    let served = served_by(&t, "app", 40);
    assert!(served.iter().all(|m| m == "m2"), "{served:?}");
    assert_eq!((a.count(), b.count()), (5, 40));
}

fn turn(t: &Tenant<'_>, conversation: usize, turns: usize) -> Resp {
    let mut messages = vec![
        json!({"role": "system", "content": format!("You are assistant {conversation}.")}),
        json!({"role": "user", "content": format!("Hello from conversation {conversation}")}),
    ];
    for i in 1..turns {
        messages.push(json!({"role": "assistant", "content": format!("answer {i}")}));
        messages.push(json!({"role": "user", "content": format!("question {i}")}));
    }
    let body = json!({"model": "app", "messages": messages}).to_string();
    t.gw.request("POST", "/v1/chat/completions", Some(&t.key), Some(&body))
}

#[test]
fn eight_conversations_under_a_one_to_one_spread_with_cache_affinity_each_stay_on_one_model() {
    let gw = Gateway::shared();
    let (t, _a, _b) = two_models(gw, "affinity");
    let rule = json!({"match": "app", "chain": [spread(1, 1)], "cache_affinity_s": 600});
    let r = t.put_ok("/routing-rules", rule);
    assert_eq!(r.json()["cache_affinity_s"], 600);
    std::thread::scope(|s| {
        for c in 0..8 {
            let t = &t;
            s.spawn(move || {
                let first = turn(t, c, 1);
                assert_eq!(first.status, 200, "{}", first.text);
                assert_eq!(first.header("x-cognigate-cache-affinity"), Some("miss"));
                let model = first.header("x-cognigate-model").unwrap().to_owned();
                for turns in 2..=5 {
                    let r = turn(t, c, turns);
                    assert_eq!(r.status, 200, "{}", r.text);
                    assert_eq!(
                        r.header("x-cognigate-model"),
                        Some(model.as_str()),
                        "turn {turns}"
                    );
                    assert_eq!(
                        r.header("x-cognigate-cache-affinity"),
                        Some("hit"),
                        "turn {turns}"
                    );
                }
            });
        }
    });
    // A name without cache_affinity_s says nothing about affinity.
    let r = t.chat("m1");
    assert_eq!(r.header("x-cognigate-cache-affinity"), None);
    let listed = gw.admin("GET", &t.path("/routing-rules"), None).json();
    assert_eq!(
        listed["data"][0]["cache_affinity_s"], 600,
        "read back from storage"
    );
}

#[test]
fn an_alias_with_cache_affinity_says_miss_then_hit_on_chat_messages_and_responses() {
    let gw = Gateway::shared();
    let (t, _a, _b) = two_models(gw, "aliasaff");
    let alias = json!({"cost_tier": "cheapest", "cache_affinity_s": 60});
    let r = t.put_ok("/aliases/sticky", alias);
    assert_eq!(r.json()["cache_affinity_s"], 60);
    let user = |text: &str| json!({"role": "user", "content": text});
    let assistant = json!({"role": "assistant", "content": "ok"});
    let bodies = [
        (
            "/v1/chat/completions",
            json!({"model": "sticky", "messages": [user("chat")]}),
            json!({"model": "sticky", "messages": [user("chat"), assistant, user("more")]}),
        ),
        (
            "/v1/messages",
            json!({"model": "sticky", "max_tokens": 16, "system": "S", "messages": [user("msg")]}),
            json!({"model": "sticky", "max_tokens": 16, "system": "S", "messages": [user("msg"), assistant, user("more")]}),
        ),
        (
            "/v1/responses",
            json!({"model": "sticky", "instructions": "S", "input": "resp"}),
            json!({"model": "sticky", "instructions": "S", "input": [user("resp"), assistant, user("more")]}),
        ),
    ];
    for (path, first, second) in bodies {
        for (body, expect) in [(first, "miss"), (second, "hit")] {
            let r = gw.request("POST", path, Some(&t.key), Some(&body.to_string()));
            assert_eq!(r.status, 200, "{path}: {}", r.text);
            assert_eq!(
                r.header("x-cognigate-cache-affinity"),
                Some(expect),
                "{path}"
            );
            assert_eq!(r.header("x-cognigate-model"), Some("m1"), "{path}");
        }
    }
}

#[test]
fn spread_validation_errors_are_400_with_field_paths_and_change_nothing() {
    let gw = Gateway::shared();
    let (t, _a, _b) = two_models(gw, "spreadbad");
    let good = json!({"match": "app", "chain": ["m1", spread(3, 1)]});
    let written = t.put_ok("/routing-rules", good.clone());
    assert_eq!(
        written.json()["chain"],
        good["chain"],
        "shown back as written"
    );
    let before = gw.admin("GET", &t.path("/routing-rules"), None).json();
    let member = |m: &str, w: i64| json!({"model": m, "weight": w});
    for (chain, param) in [
        (json!(["m1", {"spread": []}]), "chain[1].spread"),
        (
            json!(["m1", {"spread": [member("m1", 1), member("m2", 0)]}]),
            "chain[1].spread[1].weight",
        ),
        (
            json!(["m1", {"spread": [member("m2", -2)]}]),
            "chain[1].spread[0].weight",
        ),
        (
            json!(["m1", {"spread": [member("m2", 1), member("m2", 2)]}]),
            "chain[1].spread[1].model",
        ),
    ] {
        let r = t.put("/routing-rules", json!({"match": "app", "chain": chain}));
        assert_eq!(r.status, 400, "{chain}: {}", r.text);
        assert_eq!(r.json()["error"]["param"], param, "{}", r.text);
    }
    let r = t.put(
        "/routing-rules",
        json!({"match": "app", "chain": ["m1"], "cache_affinity_s": 0}),
    );
    assert_eq!(
        (r.status, r.json()["error"]["param"].clone()),
        (400, json!("cache_affinity_s"))
    );
    assert_eq!(
        gw.admin("GET", &t.path("/routing-rules"), None).json(),
        before
    );
    // A member that resolves to nothing is written, with a warning.
    let r = t.put_ok(
        "/routing-rules",
        json!({"match": "other", "chain": [{"spread": [member("m1", 1), member("gone", 1)]}]}),
    );
    assert_eq!(
        r.json()["warnings"],
        json!(["'gone' is neither a model nor an alias"])
    );
}
