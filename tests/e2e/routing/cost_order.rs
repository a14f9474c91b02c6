//! Cached tokens in the cost order, end to end: a price alias's cheaper-by-list model loses to
//! one with a cached price once the tenant's measured cached share of it makes it cheaper, when
//! the config is loaded again after the live stats flushed; `explain` shows the effective prices.

use crate::support::gateway::{eventually, Gateway, Resp, Tenant};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::time::Duration;

/// Configs live 1 s, and outcomes are flushed to the routing object 50 ms after a request.
fn gateway() -> &'static Gateway {
    static GW: std::sync::OnceLock<Gateway> = std::sync::OnceLock::new();
    GW.get_or_init(|| Gateway::start(&[("CONFIG_TTL_MS", "1000"), ("LIVE_STATS_FLUSH_MS", "50")]))
}

fn served(r: &Resp) -> String {
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-cognigate-model").unwrap_or_default().to_owned()
}

fn explained(t: &Tenant<'_>, model: &str) -> Value {
    let r =
        t.gw.admin("GET", &t.path(&format!("/explain?model={model}")), None);
    assert_eq!(r.status, 200, "{}", r.text);
    r.json()
}

/// An answer of `model` whose usage reports 1,000 prompt tokens, 900 of them read from the cache.
fn cached_answer(model: &str) -> Reply {
    let body = json!({"id": "chatcmpl-mock", "object": "chat.completion", "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 7, "total_tokens": 1007,
                  "prompt_tokens_details": {"cached_tokens": 900}}});
    Reply::json(200, &body.to_string())
}

#[test]
fn a_price_alias_serves_the_model_whose_measured_cached_share_makes_it_cheaper_and_explain_shows_why(
) {
    let gw = gateway();
    let mock = MockProvider::start("cost-order").expect("mock");
    let t = gw.tenant("cost-order");
    t.provider("p", &mock.url(), &["sk-1"], "failover");
    // `list`: 1 + 1 = 2 per Mtok. `cacheable`: 3 + 0.5 = 3.5 by list, its cached input 0.3.
    t.put_ok(
        "/models/list",
        json!({"provider": "p", "context_window": 8000,
               "input_price_per_mtok": 1, "output_price_per_mtok": 1}),
    );
    t.put_ok(
        "/models/cacheable",
        json!({"provider": "p", "context_window": 8000, "input_price_per_mtok": 3,
               "output_price_per_mtok": 0.5, "cached_input_price_per_mtok": 0.3}),
    );
    t.put_ok("/aliases/thrifty", json!({"capabilities": ["chat"]}));
    mock.push(Rule::any(cached_answer("cacheable")).model("cacheable"));
    assert_eq!(
        served(&t.chat("thrifty")),
        "list",
        "nothing measured: the list order"
    );
    let before = explained(&t, "thrifty");
    let first = &before["candidates"][0];
    assert_eq!(
        (
            &first["model"],
            &first["effective_price_per_mtok"],
            &first["cached_share"]
        ),
        (&json!("list"), &json!(2.0), &Value::Null),
        "{before}"
    );
    // The tenant's traffic on `cacheable` reads 90% of its prompt from the provider's cache.
    for _ in 0..3 {
        assert_eq!(served(&t.chat("cacheable")), "cacheable");
    }
    std::thread::sleep(Duration::from_millis(100));
    // This request's end flushes the outcomes (and tokens) to the routing object.
    served(&t.chat("cacheable"));
    // 3 × 0.1 + 0.3 × 0.9 + 0.5 = 1.07 < 2: once the config is loaded again, within its TTL.
    eventually(
        "the alias to move to the cached model",
        Duration::from_secs(5),
        || served(&t.chat("thrifty")) == "cacheable",
    );
    let after = explained(&t, "thrifty");
    let first = &after["candidates"][0];
    assert_eq!(first["model"], "cacheable", "{after}");
    assert_eq!(first["cached_share"].as_f64(), Some(0.9), "{after}");
    let effective = first["effective_price_per_mtok"].as_f64().unwrap();
    assert!((effective - 1.07).abs() < 1e-9, "{after}");
    // A chain naming both shows each at its own effective price; `list` has no cached price.
    let r = t.put(
        "/routing-rules",
        json!({"match": "both", "chain": ["list", "cacheable"]}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let both = explained(&t, "both");
    let prices: Vec<(&Value, &Value)> = both["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (&c["model"], &c["effective_price_per_mtok"]))
        .collect();
    assert_eq!(prices[0], (&json!("list"), &json!(2.0)), "{both}");
    assert_eq!(prices[1].0, "cacheable", "{both}");
}
