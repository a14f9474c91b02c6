//! The response cache's e2e helpers: a tenant with the cache on, a chat body, a
//! completion that names its upstream answer, and the wait for a miss's background write.

use super::gateway::{eventually, Gateway, Resp, Tenant};
use super::sdk::python;
use cognigate::mock::{MockProvider, Reply};
use serde_json::{json, Value};
use std::time::Duration;

pub const SETTLED: Duration = Duration::from_secs(10);

/// A fresh tenant with the mock's model `m` ($1 per Mtok in and out) and `cache` settings.
pub fn cached(hint: &str, cache: Value) -> (Tenant<'static>, MockProvider) {
    let gw = Gateway::shared();
    let (t, mock) = gw.tenant_with_mock(hint, &["sk-1"], "round_robin");
    if !cache.is_null() {
        t.put_ok("/settings", json!({"cache": cache}));
    }
    (t, mock)
}

pub fn chat_body(content: &str, temperature: f64) -> Value {
    json!({"model": "m", "temperature": temperature,
           "messages": [{"role": "user", "content": content}]})
}

pub fn post(t: &Tenant<'_>, body: &Value, headers: &[(&str, &str)]) -> Resp {
    let r = t.post_with("/v1/chat/completions", body, headers);
    assert_eq!(r.status, 200, "{}", r.text);
    r
}

/// A completion whose text says which upstream answer it was.
pub fn answer(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100000, "completion_tokens": 50000, "total_tokens": 150000}})
        .to_string(),
    )
}

/// Waits until the miss of request `id` is in the cache: with `DEBUG_COUNTERS` the worker logs
/// each entry it stored, after the answer (the write runs under `waitUntil`).
pub fn stored_id(t: &Tenant<'_>, id: &str) {
    let needle = format!(r#""msg":"cache_stored","request_id":"{id}""#);
    eventually("the miss stored", SETTLED, || t.gw.log().contains(&needle));
}

/// A miss, once its answer is stored.
pub fn stored(t: &Tenant<'_>, r: &Resp) {
    assert_eq!(r.header("x-cognigate-cache"), Some("miss"), "{}", r.text);
    stored_id(t, r.header("x-cognigate-request-id").unwrap());
}

pub fn cache_sdk(t: &Tenant<'_>, scenario: &str) -> Value {
    let base = format!("{}/v1", t.gw.url);
    python("cache_sdk.py", &[&base, &t.key, "m", scenario])
}
