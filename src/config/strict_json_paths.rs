//! `Strict`'s error paths against serde_path_to_error's on the same bodies: every admin body type,
//! and each value in a full body replaced by every kind of JSON value, removed, or joined by an
//! unknown field. The path and the message must both be the same.

use super::admin_body::{AliasBody, BreakerReset, ModelBody, ProviderBody, RuleBody, TenantBody};
use super::policy::KeyPolicyChange;
use super::strict_json::Strict;
use super::{ChainEntry, SettingsOverrides};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// A failed read's (path, message), or none when the body was read.
type Failure = Option<(String, String)>;

fn both<T: DeserializeOwned>(v: &Value) -> (Failure, Failure) {
    let ours = T::deserialize(Strict(v))
        .err()
        .map(|e| (e.path(), e.to_string()));
    let theirs = serde_path_to_error::deserialize::<_, T>(Strict(v))
        .err()
        .map(|e| (e.path().to_string(), e.into_inner().to_string()));
    (ours, theirs)
}

/// Every body one change away from `v`.
fn variants(v: &Value) -> Vec<Value> {
    let kinds = [
        json!(null),
        json!(true),
        json!(7),
        json!(-3),
        json!(2.5),
        json!("x"),
        json!("https://x/v1"),
        json!("openai"),
        json!([]),
        json!({}),
        json!([null]),
        json!(["a", 1]),
        json!({"zz": 1}),
        json!({"spread": [{"model": "a", "weight": "w"}]}),
    ];
    let mut out = Vec::new();
    let mut here: Vec<Value> = kinds.to_vec();
    match v {
        Value::Object(map) => {
            let mut extra = map.clone();
            extra.insert("zz".into(), json!(1));
            here.push(Value::Object(extra));
            for (k, child) in map {
                let mut without = map.clone();
                without.remove(k);
                here.push(Value::Object(without));
                for c in variants(child) {
                    let mut with = map.clone();
                    with.insert(k.clone(), c);
                    out.push(Value::Object(with));
                }
            }
        }
        Value::Array(items) => {
            let mut more = items.clone();
            more.extend(items.iter().cloned());
            here.push(Value::Array(more));
            for (i, child) in items.iter().enumerate() {
                for c in variants(child) {
                    let mut with = items.clone();
                    with[i] = c;
                    out.push(Value::Array(with));
                }
            }
        }
        _ => {}
    }
    out.extend(here);
    out
}

fn check<T: DeserializeOwned>(seed: Value) -> usize {
    let all = variants(&seed);
    for v in &all {
        let (ours, theirs) = both::<T>(v);
        assert_eq!(ours, theirs, "{v}");
    }
    all.len()
}

#[test]
fn paths_and_messages_are_serde_path_to_error_s() {
    let budget = json!({"usd": 1.5, "period": "day"});
    let n = check::<TenantBody>(json!({"id": "a", "name": "a"}))
        + check::<KeyPolicyChange>(
            json!({"name": "a", "models": ["a"], "rpm": 1, "tpm": 1, "budget": budget}),
        )
        + check::<ProviderBody>(json!({"kind": "openai", "base_url": "https://x/v1",
            "keys": ["sk-1", {"secret": "A"}], "key_strategy": "round_robin", "timeout_ms": 1,
            "retry": {"max_retries": 1, "base_delay_ms": 1, "max_delay_ms": 1},
            "rate_limit_signals": ["x-ratelimit-reset"], "auth_cooldown_ms": 1, "rpm": 1}))
        + check::<ModelBody>(json!({"provider": "a", "upstream_model": "a",
            "capabilities": ["tools"], "context_window": 1, "input_price_per_mtok": 1.5,
            "output_price_per_mtok": 1.5, "cached_input_price_per_mtok": 1.5,
            "cache_write_price_per_mtok": 1.5, "cache_write_1h_price_per_mtok": 1.5,
            "max_output_tokens": 1, "fallback_model": "b"}))
        + check::<AliasBody>(json!({"pin": "a", "capabilities": ["tools"],
            "min_context_window": 1, "provider_preference": ["a"], "cost_tier": "cheapest",
            "rank_by": "price", "weights": {"success": 1.5, "latency": 1.5, "ttfb": 1.5,
            "price": 1.5}, "cache_affinity_s": 1, "cache_ttl_s": 1, "on_refusal": "answer",
            "prefer_newest_version": true}))
        + check::<RuleBody>(json!({"name": "a", "match": "a", "priority": 1,
            "when": {"model": {"$regex": "^a"}}, "chain": ["b", {"spread": [{"model": "a",
            "weight": 1}]}], "cache_affinity_s": 1, "cache_ttl_s": 1, "on_refusal": "answer"}))
        + check::<SettingsOverrides>(json!({"max_fallback_depth": 1, "breaker":
            {"error_threshold": 1, "window_ms": 1, "open_duration_ms": 1,
            "open_durations_ms": [1, 2]}, "context_window_guard": true, "budget": budget,
            "end_user": {"budget": budget, "rpm": 1, "required": true}, "default_model": "a",
            "fallback_model": "a", "exploration_share": 0.5, "probes": true, "degraded": {"healthy_ratio": 0.5,
            "entry_grace_ms": 1, "exit_grace_ms": 1, "min_providers": 1}, "alerts":
            {"webhook_url": "https://x/h", "events": ["breaker.opened"]}, "cache":
            {"ttl_s": 1, "max_ttl_s": 1}}))
        + check::<BreakerReset>(json!({"provider": "a", "model": "a"}))
        + check::<ChainEntry>(json!({"spread": [{"model": "a", "weight": 1}]}))
        + check::<Vec<ChainEntry>>(json!(["a", {"spread": [{"model": "a", "weight": 1}]}]));
    assert!(n > 1000, "{n} bodies");
}
