//! "Every upstream call is charged" and "token counts that clients see", end to end on
//! workerd against the mock: a request whose usage never came is charged the gateway's estimate
//! (and its key's budget moves), a late usage report is recorded under the same request id,
//! `/v1/messages/count_tokens` counts with the same estimator without an upstream call, and a
//! translated Messages stream shows the input estimate at `message_start`.

use crate::support::gateway::{eventually, Gateway, Resp, Tenant};
use crate::support::sdk::anthropic_sdk;
use cognigate::mock::{chunk_event, MockProvider, Reply, Step};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::time::Duration;

/// Ledger settling and the log both trail the answer; the issue allows 10 s.
const SETTLED: Duration = Duration::from_secs(10);

/// A tenant whose model `m` (on provider `p` of `kind`, a fresh mock) costs $10 per million
/// tokens each way: a 20 KB prompt (about 5,000 tokens) costs about $0.05.
fn priced<'g>(gw: &'g Gateway, hint: &str, kind: &str) -> (Tenant<'g>, MockProvider) {
    let mock = MockProvider::start(hint).unwrap();
    let t = gw.tenant(hint);
    t.put_ok(
        "/providers/p",
        json!({"kind": kind, "base_url": mock.url(), "keys": ["sk-1"], "timeout_ms": 10000}),
    );
    t.put_ok(
        "/models/m",
        json!({"provider": "p", "context_window": 100000,
            "input_price_per_mtok": 10, "output_price_per_mtok": 10}),
    );
    (t, mock)
}

/// A chat request with a 20 KB prompt.
fn big_chat(stream: bool) -> Value {
    let prompt = "The quick brown fox jumps over the lazy dog. ".repeat(455);
    assert!(prompt.len() >= 20_000);
    json!({"model": "m", "stream": stream, "messages": [{"role": "user", "content": prompt}]})
}

fn post(t: &Tenant<'_>, path: &str, body: &Value) -> Resp {
    t.gw.request("POST", path, Some(&t.key), Some(&body.to_string()))
}

/// The tenant's one key: its id and its spend as the admin key list shows it.
fn key_spend(t: &Tenant<'_>) -> (String, f64) {
    let keys = t.gw.admin("GET", &t.path("/api-keys"), None).json();
    let row = &keys["data"][0];
    let usd = row["spend"]["usd"].as_f64().unwrap_or(0.0);
    (row["id"].as_str().unwrap().to_owned(), usd)
}

/// The request just made moves the key's spend above zero; a $0.01 budget then refuses the next
/// request with 402, with no upstream call.
fn charged_then_refused(t: &Tenant<'_>, mock: &MockProvider) {
    eventually("the key's spend to move", SETTLED, || key_spend(t).1 > 0.0);
    let (id, spent) = key_spend(t);
    assert!(spent > 0.01, "about 5,000 prompt tokens at $10/M: {spent}");
    let r = t.gw.admin(
        "PATCH",
        &t.path(&format!("/api-keys/{id}")),
        Some(json!({"budget": {"usd": 0.01, "period": "day"}})),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    mock.set_default(Reply::ok());
    let mut refused = None;
    eventually("the budget to refuse", SETTLED, || {
        let r = post(t, "/v1/chat/completions", &big_chat(false));
        let done = r.status == 402;
        refused = Some(r);
        done
    });
    let refused = refused.unwrap();
    assert_eq!(
        refused.error_code().as_deref(),
        Some("budget_exceeded"),
        "{}",
        refused.text
    );
    let calls = mock.count();
    assert_eq!(
        post(t, "/v1/chat/completions", &big_chat(false)).status,
        402
    );
    assert_eq!(
        mock.count(),
        calls,
        "a refused request makes no upstream call"
    );
}

/// A record charged from the estimate: the prompt's ~5,000 tokens, at the model's prices.
fn assert_estimated(rec: &Value) {
    assert_eq!(rec["usage_source"], "estimated", "{rec}");
    assert_eq!(rec["outcome"], "served", "{rec}");
    let prompt = rec["tokens"]["prompt"].as_u64().unwrap();
    assert!((5_000..5_200).contains(&prompt), "ceil(bytes / 4): {rec}");
    assert!(rec["cost_usd"].as_f64().unwrap() > 0.05, "{rec}");
}

/// A stream that sends one chunk, then keeps generating for `chunks` × 100 ms before its usage.
fn slow_stream(chunks: usize) -> Reply {
    let mut steps = vec![Step::Data(chunk_event("m", "first"))];
    for _ in 0..chunks {
        steps.push(Step::Sleep(100));
        steps.push(Step::Data(chunk_event("m", "more")));
    }
    steps.push(Step::Data(
        json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": "m", "choices": [],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}})
        .to_string(),
    ));
    steps.push(Step::Data("[DONE]".into()));
    Reply::stream(steps)
}

/// Starts a streamed request, reads its first chunk and hangs up.
fn read_first_chunk_and_hang_up(t: &Tenant<'_>, body: &Value) -> String {
    let resp = t.gw.send(
        "POST",
        "/v1/chat/completions",
        Some(&t.key),
        Some(&body.to_string()),
    );
    assert_eq!(resp.status().as_u16(), 200);
    let mut reader = resp.into_body().into_reader();
    let mut buf = [0u8; 4096];
    let n = reader.read(&mut buf).unwrap();
    assert!(n > 0, "the first chunk");
    // Dropping the unfinished body closes the connection.
    drop(reader);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn a_stream_cut_by_the_caller_after_its_first_chunk_is_charged_an_estimate_and_a_budget_then_refuses(
) {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "caller-cut", "openai");
    // Still generating long after the caller left: no usage within the late-read bound.
    mock.set_default(slow_stream(50));
    let first = read_first_chunk_and_hang_up(&t, &big_chat(true));
    assert!(first.contains("first"), "{first}");
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert_estimated(rec);
    charged_then_refused(&t, &mock);
}

#[test]
fn a_stream_the_upstream_cuts_is_charged_an_estimate_and_a_budget_then_refuses() {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "upstream-cut", "openai");
    mock.set_default(Reply::stream(vec![
        Step::Data(chunk_event("m", "partial answer")),
        Step::Cut,
    ]));
    let r = post(&t, "/v1/chat/completions", &big_chat(true));
    assert_eq!(r.status, 200);
    assert!(r.text.contains("upstream_stream_error"), "{}", r.text);
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert_estimated(rec);
    // "partial answer": 14 generated bytes, 4 tokens.
    assert_eq!(rec["tokens"]["completion"], 4, "{rec}");
    charged_then_refused(&t, &mock);
}

#[test]
fn an_answer_without_usage_is_charged_an_estimate_shown_in_the_cost_header_and_a_budget_then_refuses(
) {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "no-usage-charged", "openai");
    mock.set_default(Reply::json(
        200,
        r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"12345678"},"finish_reason":"stop"}]}"#,
    ));
    let r = post(&t, "/v1/chat/completions", &big_chat(false));
    assert_eq!(r.status, 200, "{}", r.text);
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert_estimated(rec);
    assert_eq!(rec["tokens"]["completion"], 2, "8 generated bytes: {rec}");
    let header: f64 = r.header("x-cognigate-cost-usd").unwrap().parse().unwrap();
    assert!(
        (header - rec["cost_usd"].as_f64().unwrap()).abs() < 1e-12,
        "the cost header is the estimate: {header} {rec}"
    );
    charged_then_refused(&t, &mock);
}

#[test]
fn a_late_usage_report_after_the_caller_left_is_charged_instead_of_the_estimate_never_both() {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "late-usage", "openai");
    // The usage event comes about a second after the caller left: within the late-read bound.
    mock.set_default(slow_stream(8));
    read_first_chunk_and_hang_up(&t, &big_chat(true));
    let recs = gw.usage_records(&t.id, 1, SETTLED);
    assert_eq!(recs[0]["usage_source"], "reported", "{recs:?}");
    assert_eq!(
        recs[0]["tokens"],
        json!({"prompt": 5, "completion": 7, "cached": 0})
    );
    assert!(recs[0]["request_id"]
        .as_str()
        .is_some_and(|id| id.starts_with("req_")));
    // The provider's 12 tokens at $10/M, not the ~5,000-token estimate, and not both.
    eventually("the key's spend to move", SETTLED, || key_spend(&t).1 > 0.0);
    std::thread::sleep(Duration::from_millis(1_500));
    let spent = key_spend(&t).1;
    assert!((spent - 12.0 * 10.0 / 1e6).abs() < 1e-12, "spend {spent}");
    assert_eq!(gw.usage_records(&t.id, 1, SETTLED).len(), 1, "one record");
}

/// A guard, not a change: it passed before estimates were charged too. It pins down the runtime
/// behaviour the README relies on for non-streamed answers: a caller who hangs up does not cancel
/// the request, so the answer is still read and its usage charged.
#[test]
fn a_non_streamed_request_whose_caller_hangs_up_mid_call_is_still_charged() {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "hang-up", "openai");
    mock.set_default(Reply::ok().delay(1_500));
    let body = big_chat(false).to_string();
    let addr = gw.url.trim_start_matches("http://").to_owned();
    let mut socket = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        socket,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        t.key,
        body.len()
    )
    .unwrap();
    eventually("the upstream call to start", SETTLED, || mock.count() == 1);
    drop(socket);
    let rec = &gw.usage_records(&t.id, 1, SETTLED)[0];
    assert_eq!(rec["outcome"], "served", "{rec}");
    assert_eq!(rec["usage_source"], "reported", "{rec}");
    eventually("the key's spend to move", SETTLED, || key_spend(&t).1 > 0.0);
}

#[test]
fn the_anthropic_sdks_count_tokens_grows_with_the_system_prompt_tools_and_messages_with_no_upstream_call(
) {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "count-tokens", "anthropic");
    // Each count takes a slot of the key's rpm (a request without tokens), and nothing else.
    let limited = Tenant {
        gw,
        id: t.id.clone(),
        key: t.key_with(json!({"rpm": 50})).1,
    };
    let v = anthropic_sdk(&limited, "m", "count_tokens");
    let counts: Vec<u64> = v["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert!(counts[0] > 0, "{v}");
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{v}");
    assert_eq!(v["beta"], counts[3], "?beta=true counts the same: {v}");
    assert_eq!(v["unknown"]["status"], 404, "{v}");
    assert_eq!(v["unknown"]["class"], "NotFoundError", "{v}");
    assert_eq!(
        v["unknown"]["body"]["error"]["type"], "not_found_error",
        "{v}"
    );
    assert_eq!(mock.count(), 0, "no upstream call");
    // The counts left no usage record: the one request leaves one.
    let body =
        json!({"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]});
    let r = gw.request(
        "POST",
        "/v1/messages",
        Some(&limited.key),
        Some(&body.to_string()),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(gw.usage_records(&t.id, 1, SETTLED)[0]["outcome"], "served");
}

#[test]
fn count_tokens_refuses_a_missing_key_and_a_body_without_messages_in_anthropics_shape() {
    let gw = Gateway::shared();
    let (t, mock) = priced(gw, "count-refusals", "openai");
    let path = "/v1/messages/count_tokens?beta=true";
    let r = gw.request("POST", path, None, Some(r#"{"model":"m","messages":[]}"#));
    assert_eq!(r.status, 401, "{}", r.text);
    assert_eq!(
        r.json()["error"]["type"],
        "authentication_error",
        "{}",
        r.text
    );
    let r = post(&t, path, &json!({"model": "m"}));
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.json()["type"], "error", "{}", r.text);
    let image = json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A".repeat(200_000)}}]}]});
    let r = post(&t, path, &image);
    assert_eq!(r.status, 200, "{}", r.text);
    let n = r.json()["input_tokens"].as_u64().unwrap();
    assert!(
        (1_600..1_700).contains(&n),
        "an image counts 1,600 tokens: {n}"
    );
    assert_eq!(mock.count(), 0);
}

#[test]
fn a_streamed_message_from_an_openai_compatible_upstream_shows_the_input_estimate_at_message_start()
{
    let gw = Gateway::shared();
    let (t, _mock) = priced(gw, "start-usage", "openai");
    let v = anthropic_sdk(&t, "m", "stream_start");
    let start = v["start"]["input_tokens"].as_u64().unwrap();
    // "Hello " × 200 is 1,200 bytes of prompt: about 300 tokens and more.
    assert!((300..400).contains(&start), "{v}");
    assert_eq!(
        v["final"]["input_tokens"], 5,
        "the reported usage at the end: {v}"
    );
    assert_eq!(v["final"]["output_tokens"], 7, "{v}");
}
