//! Prompt-cache writes and reads priced, end to end: an Anthropic upstream (the mock, scripted)
//! reports cache reads and writes split by TTL; the cost header, the usage record and the usage
//! API charge each part at its own price and report the net savings.

use crate::support::gateway::{eventually, Gateway, Tenant};
use crate::support::spend::priced;
use cognigate::mock::{MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};
use std::time::Duration;

const SETTLED: Duration = Duration::from_secs(10);

/// Input $3, output $15, cache reads $0.3 per million; write prices left to their defaults
/// (5-minute 1.25 × input = $3.75, 1-hour 2 × input = $6).
const PRICES: &str = r#"{"input_price_per_mtok": 3, "output_price_per_mtok": 15, "cached_input_price_per_mtok": 0.3}"#;

/// 10 uncached input tokens, 1,000 read, 300 written (100 for 5 minutes, 200 for an hour), 4 out.
const USAGE: &str = r#"{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":300,
    "cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":4}"#;

fn message(usage: &str) -> Reply {
    Reply::json(
        200,
        &format!(
            r#"{{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{{"type":"text","text":"hi"}}],"stop_reason":"end_turn","usage":{usage}}}"#
        ),
    )
}

/// A tenant with Anthropic provider `p` on a fresh mock answering with `USAGE`, and model `m` at
/// `PRICES` with `extra` fields.
fn anthropic<'g>(gw: &'g Gateway, hint: &str, extra: Value) -> (Tenant<'g>, MockProvider) {
    let mut model: Value = serde_json::from_str(PRICES).unwrap();
    model
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let (t, mock) = priced(gw, hint, "anthropic", model);
    mock.set_default(message(USAGE));
    (t, mock)
}

/// `rec[field]` is `want` dollars, to the float's rounding.
fn assert_usd(rec: &Value, field: &str, want: f64) {
    let got = rec[field].as_f64().unwrap();
    assert!((got - want).abs() < 1e-12, "{field}: {rec}");
}

fn chat(stream: bool) -> Value {
    json!({"model": "m", "stream": stream, "messages": [{"role": "user", "content": "hi"}]})
}

fn messages() -> Value {
    json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]})
}

#[test]
fn cache_writes_are_charged_at_their_ttls_write_price_in_the_cost_header_of_chat_and_messages_callers(
) {
    let gw = Gateway::shared();
    let (t, _mock) = anthropic(gw, "cache-write-cost", json!({}));
    // 10 × 3 + 1000 × 0.3 + 100 × 3.75 + 200 × 6 + 4 × 15 = 30 + 300 + 375 + 1200 + 60 = 1965.
    for (path, body) in [
        ("/v1/chat/completions", chat(false)),
        ("/v1/messages", messages()),
    ] {
        let r = t.post_with(path, &body, &[]);
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        assert_eq!(r.header("x-cognigate-cost-usd"), Some("0.001965"), "{path}");
    }
    let recs = gw.usage_records(&t.id, 2, SETTLED);
    for rec in &recs {
        assert_eq!(
            rec["tokens"],
            json!({"prompt": 1310, "completion": 4, "cached": 1000, "cache_write": 100, "cache_write_1h": 200})
        );
        assert_usd(rec, "cost_usd", 0.001965);
        // Reads: 1000 × 2.7 = 2700; the writes' premium: 100 × 0.75 + 200 × 3 = 675.
        assert_usd(rec, "cache_savings_usd", 0.002025);
    }
}

#[test]
fn a_models_own_write_prices_apply_and_a_write_without_breakdown_is_a_five_minute_one() {
    let gw = Gateway::shared();
    let prices = json!({"cache_write_price_per_mtok": 4, "cache_write_1h_price_per_mtok": 5});
    let (t, mock) = anthropic(gw, "cache-write-own", prices);
    let listed = gw.admin("GET", &t.path("/models/m"), None).json();
    assert_eq!(
        (
            listed["cache_write_price_per_mtok"].as_f64(),
            listed["cache_write_1h_price_per_mtok"].as_f64()
        ),
        (Some(4.0), Some(5.0)),
        "{listed}"
    );
    // 30 + 300 + 100 × 4 + 200 × 5 + 60 = 1790.
    let r = t.post_with("/v1/chat/completions", &chat(false), &[]);
    assert_eq!(
        r.header("x-cognigate-cost-usd"),
        Some("0.00179"),
        "{}",
        r.text
    );
    mock.push(Rule::any(message(
        r#"{"input_tokens":10,"cache_creation_input_tokens":300,"output_tokens":4}"#,
    )));
    // All 300 writes at the 5-minute price: 30 + 300 × 4 + 60 = 1290.
    let r = t.post_with("/v1/chat/completions", &chat(false), &[]);
    assert_eq!(
        r.header("x-cognigate-cost-usd"),
        Some("0.00129"),
        "{}",
        r.text
    );
}

#[test]
fn a_streamed_chat_answer_from_anthropic_is_charged_for_its_cache_writes_by_ttl() {
    let gw = Gateway::shared();
    let (t, mock) = anthropic(gw, "cache-write-stream", json!({}));
    let start = format!(
        r#"{{"type":"message_start","message":{{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{USAGE}}}}}"#
    )
    .replace('\n', "");
    let steps = [
        start.as_str(),
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}"#,
        r#"{"type":"message_stop"}"#,
    ]
    .iter()
    .map(|e| {
        let kind = serde_json::from_str::<Value>(e).unwrap()["type"].clone();
        Step::Raw(format!("event: {}\ndata: {e}\n\n", kind.as_str().unwrap()))
    })
    .collect();
    mock.push(Rule::any(Reply::stream(steps)).times(1));
    let r = t.post_with("/v1/chat/completions", &chat(true), &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        !r.text.contains("cache_creation"),
        "the usage chunk was not asked for"
    );
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert_eq!(rec["usage_source"], "reported", "{rec}");
    assert_eq!(
        (
            rec["tokens"]["cache_write"].as_u64(),
            rec["tokens"]["cache_write_1h"].as_u64()
        ),
        (Some(100), Some(200)),
        "{rec}"
    );
    assert_usd(rec, "cost_usd", 0.001965);
}

#[test]
fn the_usage_api_reports_cache_reads_writes_and_net_savings_per_model_and_per_day() {
    let gw = Gateway::shared();
    let (t, mock) = anthropic(gw, "cache-savings", json!({}));
    // One answer that reads and writes (saves 0.002025), one that only writes 1,000 tokens for
    // five minutes (its premium, 1000 × 0.75, is a loss of 0.00075).
    assert_eq!(t.post_with("/v1/messages", &messages(), &[]).status, 200);
    mock.push(Rule::any(message(
        r#"{"input_tokens":5,"cache_creation_input_tokens":1000,"output_tokens":4}"#,
    )));
    assert_eq!(t.post_with("/v1/messages", &messages(), &[]).status, 200);
    for group_by in ["model", "day"] {
        let mut usage = Value::Null;
        eventually("both requests in the usage API", SETTLED, || {
            usage = t.usage(group_by);
            usage["total"]["requests"] == 2
        });
        let g = &usage["data"][0];
        assert_eq!(usage["data"].as_array().unwrap().len(), 1, "{usage}");
        if group_by == "model" {
            assert_eq!(g["group"], "m");
        }
        for row in [g, &usage["total"]] {
            assert_eq!(row["cache_read_tokens"], 1000, "{group_by}: {row}");
            assert_eq!(row["cache_write_tokens"], 1300, "{group_by}: {row}");
            let saved = row["cache_savings_usd"].as_f64().unwrap();
            assert!((saved - 0.001275).abs() < 1e-12, "{group_by}: {row}");
        }
    }
}
