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
    let stored = super::super::messages_response::from_chat(CHAT.as_bytes()).unwrap();
    let out = streamed(Surface::Messages, &stored, false, 5, 9).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("event: message_start"), "{text}");
    assert!(text.contains(r#""text":"Hello there""#), "{text}");
    assert!(text.contains("event: message_stop"), "{text}");
}

#[test]
fn a_responses_hit_streams_responses_events_ending_completed_with_the_stored_text() {
    let stored = super::super::responses_response::from_chat(CHAT.as_bytes(), 7).unwrap();
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
