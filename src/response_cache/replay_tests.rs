use super::*;

const CHAT: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":7,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#;

fn data_lines(sse: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(sse)
        .lines()
        .filter_map(|l| l.strip_prefix("data: ").map(str::to_owned))
        .collect()
}

#[test]
fn a_chat_hit_streams_chunks_that_reassemble_to_the_stored_answer_and_end_in_done() {
    let out = chat_sse(CHAT.as_bytes(), true).unwrap();
    let lines = data_lines(&out);
    assert_eq!(lines.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = lines[..lines.len() - 1]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Hello there");
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk" && c["id"] == "chatcmpl-1"));
    assert_eq!(chunks[1]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[2]["usage"]["total_tokens"], 7);
    let without = data_lines(&chat_sse(CHAT.as_bytes(), false).unwrap());
    assert_eq!(without.len(), 3, "no usage chunk unless asked for");
}

#[test]
fn tool_calls_are_streamed_with_their_index() {
    let c = r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}"#;
    let lines = data_lines(&chat_sse(c.as_bytes(), false).unwrap());
    let first: Value = serde_json::from_str(&lines[0]).unwrap();
    let call = &first["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(
        (call["index"].as_u64(), call["id"].as_str()),
        (Some(0), Some("call_1"))
    );
    assert_eq!(call["function"]["arguments"], "{\"a\":1}");
    assert!(first["choices"][0]["delta"].get("content").is_none());
}

#[test]
fn a_messages_hit_streams_messages_events_with_the_stored_text() {
    let stored = crate::surfaces::messages_response::from_chat(CHAT.as_bytes()).unwrap();
    let out = streamed(Surface::Messages, &stored, false, 5, 9).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("event: message_start"), "{text}");
    assert!(text.contains(r#""text":"Hello there""#), "{text}");
    assert!(text.contains("event: message_stop"), "{text}");
}

#[test]
fn a_responses_hit_streams_responses_events_ending_completed_with_the_stored_text() {
    let stored = crate::surfaces::responses_response::from_chat(CHAT.as_bytes(), 7).unwrap();
    let out = streamed(Surface::Responses, &stored, false, 5, 9).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("event: response.output_text.delta"), "{text}");
    let done = text
        .split("\n\n")
        .find(|e| e.starts_with("event: response.completed"))
        .unwrap();
    let data: Value = serde_json::from_str(done.split_once("data: ").unwrap().1).unwrap();
    assert_eq!(
        data["response"]["output"][0]["content"][0]["text"],
        "Hello there"
    );
    assert_eq!(data["response"]["id"], "resp_chatcmpl-1");
}

#[test]
fn embeddings_have_no_streamed_hit() {
    assert!(streamed(Surface::Embeddings, b"{}", false, 0, 0).is_err());
}

#[test]
fn a_stored_answer_of_any_shape_is_streamed_or_refused_never_a_panic() {
    let odd_call = r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[5]},"finish_reason":"tool_calls"}]}"#;
    assert!(
        chat_sse(odd_call.as_bytes(), true).is_err(),
        "a call that is no object: an error, the hit a miss"
    );
    let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
    let max = u64::MAX;
    let shapes = [
        odd_call.to_owned(),
        odd_call.replace("[5]", r#"["x",null,[1],{"id":"a"}]"#),
        odd_call.replace("[5]", r#"{"id":"a"}"#),
        r#"{"choices":[5,"x",null,[1]]}"#.to_owned(),
        r#"{"choices":[{"message":5,"finish_reason":{"a":1},"index":"zero"}]}"#.to_owned(),
        r#"{"choices":{"a":1}}"#.to_owned(),
        format!(r#"{{"choices":[],"usage":{{"prompt_tokens":{max},"completion_tokens":{max}}}}}"#),
        r#"{"type":"message","content":[5,{"type":"tool_use","input":7},{"type":"text","text":5}],"usage":5}"#.to_owned(),
        format!(r#"{{"type":"message","content":[],"usage":{{"input_tokens":{max},"cache_read_input_tokens":{max},"output_tokens":{max}}}}}"#),
        r#"{"output":[5,{"type":"message","content":[5,{"text":[1]}]},{"type":"function_call","name":[1]}],"status":5}"#.to_owned(),
        format!(r#"{{"output":[],"usage":{{"input_tokens":{max},"output_tokens":{max}}}}}"#),
        r#"[1,2]"#.to_owned(),
        r#""text""#.to_owned(),
        deep,
        "not json".to_owned(),
        String::new(),
    ];
    for stored in &shapes {
        for surface in [
            Surface::Chat,
            Surface::Messages,
            Surface::Responses,
            Surface::Embeddings,
        ] {
            // Either answer is fine; reaching here for each is the point.
            let _ = streamed(surface, stored.as_bytes(), true, 10, 0);
        }
    }
}
