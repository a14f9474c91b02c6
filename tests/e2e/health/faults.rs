//! Fault injection: every failure kind at every position of a three-candidate chain, each cell's
//! expected outcome computed from the spec's rules and compared with what the gateway did.

use crate::support::gateway::{Gateway, Tenant};
use cognigate::mock::{chunk_event, completion_body, MockProvider, Reply, Rule, Step};
use serde_json::{json, Value};

/// Marks every provider key of this suite, so responses and logs can be searched for leaks.
const KEY_MARK: &str = "FAULTKEYMARK";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    RateLimitWithRetryAfter,
    RateLimit,
    S500,
    S502,
    S503,
    S529,
    TimeoutBeforeHeaders,
    ConnectionRefused,
    TruncatedBody,
    MalformedJson200,
    StreamCut,
}

const ALL: [Fault; 11] = [
    Fault::RateLimitWithRetryAfter,
    Fault::RateLimit,
    Fault::S500,
    Fault::S502,
    Fault::S503,
    Fault::S529,
    Fault::TimeoutBeforeHeaders,
    Fault::ConnectionRefused,
    Fault::TruncatedBody,
    Fault::MalformedJson200,
    Fault::StreamCut,
];

impl Fault {
    /// What the mock does for this fault (`None`: the provider points at a closed port).
    fn reply(self, model: &str) -> Option<Reply> {
        let status = |s: u16| {
            Reply::json(
                s,
                &format!(r#"{{"error":{{"message":"upstream said {s} {KEY_MARK}"}}}}"#),
            )
        };
        Some(match self {
            Self::RateLimitWithRetryAfter => status(429).header("Retry-After", "30"),
            Self::RateLimit => status(429),
            Self::S500 => status(500),
            Self::S502 => status(502),
            Self::S503 => status(503),
            Self::S529 => status(529),
            Self::TimeoutBeforeHeaders => Reply::ok().delay(1_500),
            Self::ConnectionRefused => return None,
            Self::TruncatedBody => Reply {
                body: cognigate::mock::Body::Truncated(completion_body(model, "cut short")),
                ..Reply::ok()
            },
            Self::MalformedJson200 => Reply::json(200, "{\"choices\": [ this is not json"),
            Self::StreamCut => Reply::stream(vec![
                Step::Data(chunk_event(model, "one")),
                Step::Data(chunk_event(model, "two")),
                Step::Cut,
            ]),
        })
    }

    /// The spec's classification of the fault, as it appears in `attempts`.
    fn expected(self) -> (&'static str, Option<u16>) {
        match self {
            Self::RateLimitWithRetryAfter | Self::RateLimit => ("rate_limit", Some(429)),
            Self::S500 => ("server", Some(500)),
            Self::S502 => ("server", Some(502)),
            Self::S503 => ("server", Some(503)),
            Self::S529 => ("server", Some(529)),
            Self::TimeoutBeforeHeaders => ("timeout", None),
            Self::ConnectionRefused => ("network", None),
            Self::TruncatedBody | Self::MalformedJson200 => ("server", Some(200)),
            Self::StreamCut => unreachable!("a cut after the first byte cannot fail over"),
        }
    }
}

struct Observed {
    status: u16,
    text: String,
    attempts: Vec<(String, Option<u16>)>,
    served_by: Option<String>,
    depth: Option<String>,
}

fn run_cell(gw: &Gateway, fault: Fault, position: usize) -> Observed {
    let t: Tenant<'_> = gw.tenant("fault");
    let mut mocks = Vec::new();
    for i in 0..3 {
        let mock = MockProvider::start(&format!("c{i}")).unwrap();
        let model = format!("m{i}");
        let reply = if i < position {
            Fault::S503.reply(&model)
        } else if i == position {
            fault.reply(&model)
        } else {
            Some(Reply::ok())
        };
        let url = match &reply {
            Some(r) => {
                mock.push(Rule::any(r.clone()));
                mock.url()
            }
            None => "http://127.0.0.1:9/v1".to_owned(),
        };
        let r = t.put(
            &format!("/providers/p{i}"),
            json!({"kind": "openai", "base_url": url, "keys": [format!("sk-{i}-{KEY_MARK}")], "timeout_ms": 300}),
        );
        assert_eq!(r.status, 200);
        t.model(&model, &format!("p{i}"), 1.0, 8000);
        mocks.push(mock);
    }
    assert_eq!(t.rule("chain", &["m0", "m1", "m2"]).status, 200);
    let stream = fault == Fault::StreamCut;
    let body = json!({"model": "chain", "stream": stream, "messages": [{"role": "user", "content": "hi"}]});
    let r = gw.request(
        "POST",
        "/v1/chat/completions",
        Some(&t.key),
        Some(&body.to_string()),
    );
    let id = r.header("x-cognigate-request-id").unwrap().to_owned();
    let line = gw.request_line(&id);
    assert!(!line.is_null(), "one log line per request");
    let attempts = line["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a["failure"].is_null())
        .map(|a| {
            (
                a["failure"].as_str().unwrap().to_owned(),
                a["status"].as_u64().map(|s| s as u16),
            )
        })
        .collect();
    Observed {
        status: r.status,
        served_by: r.header("x-cognigate-model").map(str::to_owned),
        depth: r.header("x-cognigate-fallback-depth").map(str::to_owned),
        text: r.text,
        attempts,
    }
}

#[test]
fn every_failure_kind_at_every_chain_position_ends_as_the_spec_says() {
    let gw = Gateway::shared();
    let mut cells = 0;
    let mut requests = 0;
    let mut texts = Vec::new();
    for fault in ALL {
        for position in 0..3 {
            let seen = run_cell(gw, fault, position);
            cells += 1;
            requests += 1;
            let cell = format!("{fault:?} at {position}");
            let before: Vec<(String, Option<u16>)> = (0..position)
                .map(|_| ("server".to_owned(), Some(503)))
                .collect();
            if fault == Fault::StreamCut {
                // The stream began at `position`: the candidate served, then ended with the error event.
                assert_eq!(seen.status, 200, "{cell}");
                assert_eq!(
                    seen.served_by.as_deref(),
                    Some(format!("m{position}").as_str()),
                    "{cell}"
                );
                assert_eq!(seen.depth, Some(position.to_string()), "{cell}");
                assert!(
                    seen.text.contains("upstream_stream_error") && !seen.text.contains("[DONE]"),
                    "{cell}"
                );
                assert_eq!(seen.attempts, before, "{cell}");
            } else {
                let (failure, status) = fault.expected();
                let mut want = before.clone();
                want.push((failure.to_owned(), status));
                assert_eq!(seen.attempts, want, "{cell}");
                if position < 2 {
                    assert_eq!(seen.status, 200, "{cell}: {:.300}", seen.text);
                    assert_eq!(
                        seen.served_by.as_deref(),
                        Some(format!("m{}", position + 1).as_str()),
                        "{cell}"
                    );
                    assert_eq!(seen.depth, Some((position + 1).to_string()), "{cell}");
                } else {
                    assert_eq!(seen.status, 502, "{cell}");
                    let body: Value = serde_json::from_str(&seen.text).unwrap();
                    assert_eq!(body["error"]["code"], "upstream_exhausted", "{cell}");
                    let listed: Vec<(String, Option<u16>)> = body["error"]["attempts"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| {
                            (
                                a["failure"].as_str().unwrap().to_owned(),
                                a["status"].as_u64().map(|s| s as u16),
                            )
                        })
                        .collect();
                    assert_eq!(listed, want, "{cell}");
                }
            }
            texts.push(seen.text);
        }
    }
    assert_eq!(cells, 33);
    // Neither a response nor any log line carries a provider key or the upstream's own words.
    for text in &texts {
        assert!(!text.contains(KEY_MARK), "{text:.300}");
    }
    let log = gw.log();
    assert!(!log.lines().any(|l| l.contains(&format!("sk-0-{KEY_MARK}"))
        || l.contains(&format!("sk-1-{KEY_MARK}"))
        || l.contains(&format!("sk-2-{KEY_MARK}"))));
    eprintln!("fault matrix: {cells} cells, {requests} requests, all as specified");
}
