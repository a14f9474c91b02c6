#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::config::admin_body::{parse_body, ModelBody};
use crate::config::ModelId;

fn copy(ttl_s: u32) -> StreamCopy {
    let body = r#"{"provider":"p","context_window":8000,"input_price_per_mtok":1}"#;
    let m: ModelBody = parse_body(body.as_bytes()).unwrap();
    let store = StreamStore {
        write: CacheWrite {
            key: "k".into(),
            ttl_s,
            announce: None,
        },
        surface: Surface::Chat,
        model: Some(m.validate(ModelId::parse("m").unwrap()).unwrap()),
        served_by: ("m".into(), "p".into(), 1),
        platform: Some("direct"),
    };
    let (copy, write) = StreamCopy::of(store);
    assert_eq!((write.key.as_str(), write.ttl_s), ("k", ttl_s));
    copy
}

fn chunk(delta: &str, finish: &str) -> String {
    format!("data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n")
}

const TOKENS: TokenCounts = TokenCounts::new(1_000_000, 0, 0);

#[test]
fn a_completed_stream_is_stored_whole_with_who_served_it_its_cost_and_its_expiry() {
    let mut c = copy(60);
    c.push(chunk(r#"{"role":"assistant","content":"Hel"}"#, "null").as_bytes());
    c.push(chunk(r#"{"content":"lo"}"#, r#""stop""#).as_bytes());
    c.push(b"data: [DONE]\n\n");
    let (meta, body) = c.entry(Some(TOKENS), 5_000).expect("stored");
    let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello");
    assert_eq!(
        (meta.model.as_str(), meta.provider.as_str(), meta.depth),
        ("m", "p", 1)
    );
    assert_eq!((meta.stored_at_ms, meta.expires_at_ms), (5_000, 65_000));
    assert!(
        (meta.cost_usd - 1.0).abs() < 1e-9,
        "a million prompt tokens at $1"
    );
}

#[test]
fn a_refusal_is_never_stored() {
    let mut c = copy(60);
    c.push(chunk(r#"{"role":"assistant"}"#, r#""content_filter""#).as_bytes());
    c.push(b"data: [DONE]\n\n");
    assert!(c.entry(Some(TOKENS), 5_000).is_none());
}

#[test]
fn a_stream_cut_before_its_end_is_never_stored() {
    let mut c = copy(60);
    c.push(chunk(r#"{"role":"assistant","content":"Hel"}"#, "null").as_bytes());
    assert!(c.entry(Some(TOKENS), 5_000).is_none());
}
