use super::*;
use crate::stream::EventKind;

/// Gemini's events as it sends them: whole responses, CRLF line endings, no end marker.
fn sse(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .flat_map(|e| format!("data: {e}\r\n\r\n").into_bytes())
        .collect()
}

fn event(parts: Value, finish: Option<&str>, usage: Option<Value>) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(f) = finish {
        candidate["finishReason"] = f.into();
    }
    let mut e =
        json!({"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1"});
    if let Some(u) = usage {
        e["usageMetadata"] = u;
    }
    e
}

fn text_stream() -> Vec<u8> {
    sse(&[
        event(
            json!([{"text": "Hel"}]),
            None,
            Some(json!({"promptTokenCount": 9})),
        ),
        event(
            json!([{"text": "lo"}]),
            Some("STOP"),
            Some(json!({"promptTokenCount": 9, "candidatesTokenCount": 2, "totalTokenCount": 11})),
        ),
    ])
}

/// Every chunk's JSON, and whether `[DONE]` ended the output.
fn chunks(out: &[u8]) -> (Vec<Value>, bool) {
    let mut parser = SseParser::default();
    let mut done = false;
    let mut list = Vec::new();
    for e in parser.push(out).unwrap() {
        assert!(!done, "nothing after [DONE]");
        match e.kind {
            EventKind::Done => done = true,
            _ => list.push(serde_json::from_str(&e.data).unwrap()),
        }
    }
    assert_eq!(parser.pending(), 0);
    (list, done)
}

fn run(bytes: &[u8]) -> Vec<u8> {
    let mut t = Translator::new(1_700_000_000);
    let mut out = t.push(bytes);
    out.extend(t.end());
    out
}

fn deltas(list: &[Value]) -> Vec<Value> {
    list.iter()
        .filter_map(|c| c["choices"].get(0).map(|ch| ch["delta"].clone()))
        .collect()
}

#[test]
fn a_text_stream_becomes_role_content_finish_usage_and_done() {
    let (list, done) = chunks(&run(&text_stream()));
    assert!(done);
    assert_eq!(
        deltas(&list),
        [
            json!({"role": "assistant", "content": ""}),
            json!({"content": "Hel"}),
            json!({"content": "lo"}),
            json!({})
        ]
    );
    assert_eq!(list[3]["choices"][0]["finish_reason"], "stop");
    let usage_chunk = &list[4];
    assert_eq!(usage_chunk["choices"], json!([]));
    assert_eq!(
        usage_chunk["usage"],
        json!({"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11})
    );
    for c in &list {
        assert_eq!(c["id"], "chatcmpl-r1");
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["created"], 1_700_000_000);
        assert_eq!(c["model"], "gemini-2.5-flash");
    }
    // The usage chunk reads back as the gateway meters it.
    assert_eq!(
        crate::usage::answer_usage(usage_chunk.to_string().as_bytes()).unwrap(),
        Some(crate::usage::TokenCounts::new(9, 2, 0))
    );
}

/// Thought, text, a signed function call, cumulative usage and a finish, in four events.
fn rich_stream() -> Vec<u8> {
    let mut bytes = sse(&[event(
        json!([{"text": "Plan.", "thought": true}]),
        None,
        None,
    )]);
    bytes.extend(text_stream());
    bytes.extend(sse(&[event(
        json!([{"functionCall": {"name": "f", "args": {"q": "é"}}, "thoughtSignature": "c2ln+/8="}]),
        Some("STOP"),
        Some(json!({"promptTokenCount": 9, "candidatesTokenCount": 7, "thoughtsTokenCount": 3})),
    )]));
    bytes
}

#[test]
fn a_stream_split_at_every_byte_offset_gives_the_same_chunks() {
    let bytes = rich_stream();
    let whole = run(&bytes);
    for split in 0..=bytes.len() {
        let mut t = Translator::new(1_700_000_000);
        let mut out = t.push(&bytes[..split]);
        out.extend(t.push(&bytes[split..]));
        out.extend(t.end());
        assert_eq!(out, whole, "split at {split}");
    }
    let mut t = Translator::new(1_700_000_000);
    let mut out: Vec<u8> = bytes.iter().flat_map(|b| t.push(&[*b])).collect();
    out.extend(t.end());
    assert_eq!(out, whole, "a byte at a time");
}

#[test]
fn a_function_call_arrives_whole_as_one_tool_call_chunk() {
    let bytes = sse(&[
        event(json!([{"text": "Checking."}]), None, None),
        event(
            json!([
                {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}, "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "time", "args": {}}},
            ]),
            Some("STOP"),
            None,
        ),
    ]);
    let (list, done) = chunks(&run(&bytes));
    assert!(done);
    let d = deltas(&list);
    assert_eq!(
        d[2]["tool_calls"],
        json!([{"index": 0, "id": "call_0-r1_ts_c2ln", "type": "function",
            "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}])
    );
    assert_eq!(d[3]["tool_calls"][0]["index"], 1);
    assert_eq!(d[3]["tool_calls"][0]["id"], "call_1-r1");
    assert_eq!(
        list.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
    assert!(
        list.iter().all(|c| c.get("usage").is_none()),
        "no usageMetadata, no usage chunk: the gateway estimates"
    );
    let empty_report = sse(&[event(json!([{"text": "x"}]), Some("STOP"), Some(json!({})))]);
    let (list, done) = chunks(&run(&empty_report));
    assert!(done);
    assert!(
        list.iter().all(|c| c.get("usage").is_none()),
        "a report naming no tokens"
    );
}

#[test]
fn thought_parts_stream_as_reasoning_content() {
    let bytes = sse(&[
        event(json!([{"text": "Hmm.", "thought": true}]), None, None),
        event(json!([{"text": "Yes."}]), Some("STOP"), None),
    ]);
    let (list, _) = chunks(&run(&bytes));
    let d = deltas(&list);
    assert_eq!(d[1], json!({"reasoning_content": "Hmm."}));
    assert_eq!(d[2], json!({"content": "Yes."}));
}

#[test]
fn a_stream_that_closes_before_a_finish_reason_ends_with_nothing() {
    let bytes = sse(&[event(json!([{"text": "Hel"}]), None, None)]);
    let mut t = Translator::default();
    let out = t.push(&bytes);
    assert_eq!(deltas(&chunks(&out).0).len(), 2);
    assert!(t.end().is_empty());
}

#[test]
fn an_error_event_becomes_an_openai_error_event_and_nothing_follows() {
    let mut bytes = sse(&[event(json!([{"text": "Hel"}]), None, None)]);
    bytes.extend(sse(&[
        json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
        event(json!([{"text": "lo"}]), Some("STOP"), None),
    ]));
    let mut t = Translator::default();
    let out = t.push(&bytes);
    let mut parser = SseParser::default();
    let events = parser.push(&out).unwrap();
    let last = events.last().unwrap();
    assert!(matches!(last.kind, EventKind::Error(_)));
    assert_eq!(
        serde_json::from_str::<Value>(&last.data).unwrap(),
        json!({"error": {"type": "UNAVAILABLE", "code": 503, "message": "The model is overloaded."}})
    );
    assert!(t
        .push(&sse(&[event(json!([]), Some("STOP"), None)]))
        .is_empty());
    assert!(t.end().is_empty());
}

#[test]
fn a_blocked_prompt_finishes_as_content_filter() {
    let bytes = sse(&[json!({"promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 4}, "responseId": "r9"})]);
    let (list, done) = chunks(&run(&bytes));
    assert!(done);
    assert_eq!(list[1]["choices"][0]["finish_reason"], "content_filter");
    assert_eq!(list[2]["usage"]["prompt_tokens"], 4);
}

#[test]
fn only_the_last_usage_report_counts_and_only_the_first_finish_is_sent() {
    let bytes = sse(&[
        event(
            json!([{"text": "a"}]),
            Some("STOP"),
            Some(json!({"promptTokenCount": 3, "candidatesTokenCount": 1})),
        ),
        event(
            json!([]),
            Some("STOP"),
            Some(json!({"promptTokenCount": 3, "candidatesTokenCount": 6})),
        ),
    ]);
    let (list, _) = chunks(&run(&bytes));
    let finishes = list
        .iter()
        .filter(|c| {
            c["choices"]
                .get(0)
                .is_some_and(|ch| !ch["finish_reason"].is_null())
        })
        .count();
    assert_eq!(finishes, 1);
    assert_eq!(list.last().unwrap()["usage"]["completion_tokens"], 6);
}

#[test]
fn an_event_that_never_ends_is_an_error_event() {
    let mut t = Translator::default();
    let out = t.push(&vec![b'x'; crate::stream::sse::MAX_EVENT_BYTES + 1]);
    assert!(String::from_utf8_lossy(&out).contains("event too large"));
    assert!(t.end().is_empty());
}

#[test]
fn events_of_unexpected_shapes_are_skipped_without_failing() {
    let mut bytes = sse(&[
        json!({"candidates": 5}),
        json!({"candidates": [{"content": {"parts": [5, {"functionCall": 3}, {"text": 7}]}}]}),
        json!({"candidates": [{"content": {"parts": "x"}, "finishReason": 9}]}),
        json!([1, 2]),
        json!({"error": null, "usageMetadata": [1]}),
    ]);
    bytes.extend(b"data: not json\r\n\r\n: comment\r\n\r\n");
    let mut t = Translator::default();
    let (list, _) = chunks(&t.push(&bytes));
    assert!(!list.is_empty(), "the role chunk went out");
    assert!(t.end().is_empty(), "no finishReason: a cut stream");
}
