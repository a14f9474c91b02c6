//! Load with faults: 64 concurrent callers while every upstream fails 30% of calls at random.
//! Every request must get exactly one complete answer, the only gateway 5xx is
//! `upstream_exhausted`, and breaker and park state must be consistent afterwards.
//! `COGNIGATE_LOAD_SECS` sets the duration (5 s in `make test`, 60 s in `make test-long`).

use crate::support::gateway::{agent, Gateway};
use cognigate::mock::{MockProvider, Reply};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct Tally {
    ok: u64,
    exhausted: u64,
    other: Vec<String>,
}

#[test]
fn sixty_four_callers_with_thirty_percent_upstream_failures_lose_nothing() {
    let secs: u64 = std::env::var("COGNIGATE_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let gw = Gateway::shared();
    let t = gw.tenant("load");
    assert_eq!(
        t.put(
            "/settings",
            json!({"breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": 1000}})
        )
        .status,
        200
    );
    let mocks: Vec<MockProvider> = (0..3)
        .map(|i| {
            let m = MockProvider::start(&format!("load{i}")).unwrap();
            m.set_chaos(
                300,
                vec![
                    Reply::status(503),
                    Reply::status(429).header("Retry-After", "1"),
                    Reply::status(500),
                ],
                0x5eed + i,
            );
            t.provider(
                &format!("p{i}"),
                &m.url(),
                &[&format!("sk-{i}a"), &format!("sk-{i}b")],
                "round_robin",
            );
            t.model(&format!("m{i}"), &format!("p{i}"), 1.0, 8000);
            m
        })
        .collect();
    assert_eq!(t.rule("chain", &["m0", "m1", "m2"]).status, 200);

    let deadline = Instant::now() + Duration::from_secs(secs);
    let url = format!("{}/v1/chat/completions", gw.url);
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..64)
            .map(|_| {
                let (url, key) = (url.clone(), t.key.clone());
                scope.spawn(move || {
                    let agent = agent();
                    let mut tally = Tally::default();
                    while Instant::now() < deadline {
                        let req = ureq::http::Request::builder()
                            .method("POST")
                            .uri(&url)
                            .header("authorization", format!("Bearer {key}"))
                            .body(
                                r#"{"model":"chain","messages":[{"role":"user","content":"hi"}]}"#
                                    .to_owned(),
                            )
                            .unwrap();
                        let outcome =
                            agent
                                .run(req)
                                .map_err(|e| e.to_string())
                                .and_then(|mut resp| {
                                    let status = resp.status().as_u16();
                                    let text = resp
                                        .body_mut()
                                        .read_to_string()
                                        .map_err(|e| e.to_string())?;
                                    Ok((status, text))
                                });
                        match outcome {
                            Ok((200, text))
                                if serde_json::from_str::<Value>(&text)
                                    .is_ok_and(|v| v["object"] == "chat.completion") =>
                            {
                                tally.ok += 1
                            }
                            Ok((502, text)) if text.contains("\"upstream_exhausted\"") => {
                                tally.exhausted += 1
                            }
                            Ok((status, text)) => {
                                tally.other.push(format!("{status}: {text:.200}"))
                            }
                            Err(e) => tally.other.push(format!("lost: {e}")),
                        }
                    }
                    tally
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ok: u64 = tallies.iter().map(|t| t.ok).sum();
    let exhausted: u64 = tallies.iter().map(|t| t.exhausted).sum();
    let other: Vec<&String> = tallies.iter().flat_map(|t| &t.other).collect();
    let upstream_calls: usize = mocks.iter().map(MockProvider::count).sum();
    eprintln!(
        "load: {secs} s, 64 callers, {} requests: {ok} answered, {exhausted} upstream_exhausted, {} other; {upstream_calls} upstream calls",
        ok + exhausted + other.len() as u64,
        other.len()
    );
    assert!(
        other.is_empty(),
        "unexpected answers: {:?}",
        &other[..other.len().min(5)]
    );
    assert!(ok > 0);

    // Afterwards: upstreams healthy again. Breakers re-close through their single probe, parks
    // (1 s) lapse, and the stored transitions of every breaker alternate opened/closed.
    for m in &mocks {
        m.set_chaos(0, vec![], 1);
    }
    // A breaker past its open duration stays half-open until a request reaches it, so each
    // model is asked directly.
    let start = Instant::now();
    loop {
        let served = ["m0", "m1", "m2"].iter().all(|m| t.chat(m).status == 200);
        let breakers =
            gw.request("GET", "/v1/health", Some(&t.key), None).json()["breakers"].clone();
        if served && breakers == json!([]) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "state did not settle: {breakers}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let events = gw.admin("GET", &t.path("/events?since=0"), None).json()["data"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // In the routing object's own order: a breaker opens before it closes, never closes twice in
    // a row (it may re-open after a failed probe), and ends closed.
    let mut per_model: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    for e in &events {
        per_model
            .entry(format!("{}/{}", e["provider"], e["model"]))
            .or_default()
            .push((
                e["transition_seq"].as_u64().unwrap(),
                e["event"].as_str().unwrap().to_owned(),
            ));
    }
    for (model, seq) in &mut per_model {
        seq.sort();
        let kinds: Vec<&str> = seq.iter().map(|(_, k)| k.as_str()).collect();
        assert_eq!(kinds.first(), Some(&"breaker.opened"), "{model}: {kinds:?}");
        assert!(
            !kinds
                .windows(2)
                .any(|w| w == ["breaker.closed", "breaker.closed"]),
            "{model}: {kinds:?}"
        );
        assert_eq!(
            kinds.last(),
            Some(&"breaker.closed"),
            "{model} ends closed: {kinds:?}"
        );
    }
    // Both keys of each provider are back in rotation.
    let before: Vec<usize> = mocks.iter().map(MockProvider::count).collect();
    for _ in 0..4 {
        assert_eq!(t.chat("m0").status, 200);
    }
    let keys = mocks[0].keys();
    let recent = &keys[before[0]..];
    assert!(
        recent.contains(&"sk-0a".to_owned()) && recent.contains(&"sk-0b".to_owned()),
        "{recent:?}"
    );
    eprintln!(
        "load: breaker transitions {}; all closed, parks lapsed",
        events.len()
    );
}
