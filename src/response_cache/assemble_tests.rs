use super::*;

fn chunk(delta: Value, finish: Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 3, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

#[test]
fn a_whole_stream_is_assembled_into_the_completion_it_spells_with_the_relays_usage() {
    let mut a = ChatAssembler::default();
    a.push(chunk(json!({"role": "assistant", "content": "Hel"}), Value::Null).as_bytes());
    // Split mid-event: the parser waits for its end.
    let second = chunk(json!({"content": "lo"}), json!("stop"));
    let (x, y) = second.split_at(10);
    a.push(x.as_bytes());
    a.push(y.as_bytes());
    a.push(b"data: [DONE]\n\n");
    let out = a.completion(Some(TokenCounts::new(5, 2, 0))).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["id"], "c1");
    assert_eq!(v["choices"][0]["message"]["content"], "Hello");
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert_eq!(v["usage"]["total_tokens"], 7);
}

#[test]
fn tool_call_fragments_are_joined_by_their_index() {
    let mut a = ChatAssembler::default();
    a.push(chunk(json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "get", "arguments": "{\"a\""}}]}), Value::Null).as_bytes());
    a.push(
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]}),
            json!("tool_calls"),
        )
        .as_bytes(),
    );
    a.push(b"data: [DONE]\n\n");
    let v: Value = serde_json::from_slice(&a.completion(None).unwrap()).unwrap();
    let call = &v["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(
        (call["id"].as_str(), call["function"]["name"].as_str()),
        (Some("call_1"), Some("get"))
    );
    assert_eq!(call["function"]["arguments"], "{\"a\":1}");
    assert_eq!(v["choices"][0]["message"]["content"], Value::Null);
}

#[test]
fn a_stream_cut_short_or_errored_is_never_assembled_and_a_missing_finish_stays_null() {
    let mut cut = ChatAssembler::default();
    cut.push(chunk(json!({"content": "Hel"}), Value::Null).as_bytes());
    assert_eq!(cut.completion(None), None, "no [DONE]");
    let mut unfinished = ChatAssembler::default();
    unfinished.push(chunk(json!({"content": "Hel"}), Value::Null).as_bytes());
    unfinished.push(b"data: [DONE]\n\n");
    let v: Value = serde_json::from_slice(&unfinished.completion(None).unwrap()).unwrap();
    assert_eq!(
        v["choices"][0]["finish_reason"],
        Value::Null,
        "kept as the stream gave it"
    );
    let mut errored = ChatAssembler::default();
    errored.push(chunk(json!({"content": "Hel"}), json!("stop")).as_bytes());
    errored.push(b"data: {\"error\":{\"message\":\"x\"}}\n\n");
    errored.push(b"data: [DONE]\n\n");
    assert_eq!(errored.completion(None), None);
    let mut native = ChatAssembler::default();
    native.push(b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n");
    native.push(b"data: [DONE]\n\n");
    assert_eq!(
        native.completion(None),
        None,
        "native events are not chat chunks"
    );
}

#[test]
fn an_assembled_stream_serves_a_streamed_hit_that_spells_the_same_text() {
    let mut a = ChatAssembler::default();
    a.push(
        chunk(
            json!({"role": "assistant", "content": "Hi there"}),
            json!("stop"),
        )
        .as_bytes(),
    );
    a.push(b"data: [DONE]\n\n");
    for surface in [Surface::Chat, Surface::Messages, Surface::Responses] {
        let mut again = ChatAssembler::default();
        again.push(
            chunk(
                json!({"role": "assistant", "content": "Hi there"}),
                json!("stop"),
            )
            .as_bytes(),
        );
        again.push(b"data: [DONE]\n\n");
        let stored = again.answer(surface, None, 9).unwrap();
        let sse = super::super::replay::streamed(surface, &stored, false, 0, 9).unwrap();
        assert!(
            String::from_utf8_lossy(&sse).contains("Hi there"),
            "{surface:?}"
        );
    }
    assert!(a.answer(Surface::Embeddings, None, 0).is_none());
}
