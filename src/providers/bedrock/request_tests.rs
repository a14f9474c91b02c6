use super::*;
use crate::config::admin_body::{parse_body, ModelBody};
use crate::config::ModelId;

fn model(max_output: Option<u32>) -> CatalogModel {
    let extra = max_output.map_or(String::new(), |n| format!(r#","max_output_tokens":{n}"#));
    let m: ModelBody = parse_body(
        format!(r#"{{"provider":"p","upstream_model":"anthropic.claude-v1:0","context_window":8000,"capabilities":["chat"]{extra}}}"#)
            .as_bytes(),
    )
    .unwrap();
    m.validate(ModelId::parse("m").unwrap()).unwrap()
}

fn converse(v: Value) -> Value {
    let req = ChatRequest::parse(v.to_string().as_bytes()).unwrap();
    serde_json::from_slice(&body(&model(None), &req)).unwrap()
}

fn messages(list: Value) -> Value {
    converse(json!({"model": "m", "messages": list}))
}

#[test]
fn a_plain_chat_becomes_converse_messages_with_no_model_in_the_body() {
    let b = converse(json!({"model": "m", "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": [{"type": "text", "text": "No lists."}]},
        {"role": "user", "content": "Hi"}]}));
    assert_eq!(
        b,
        json!({
            "messages": [{"role": "user", "content": [{"text": "Hi"}]}],
            "system": [{"text": "Be brief."}, {"text": "No lists."}],
            "inferenceConfig": {"maxTokens": DEFAULT_MAX_TOKENS},
        })
    );
}

#[test]
fn inference_config_takes_max_tokens_temperature_clamped_top_p_and_stop() {
    let b = converse(json!({"model": "m", "messages": [], "max_tokens": 100,
        "max_completion_tokens": 200, "temperature": 1.5, "top_p": 0.9, "stop": ["END", ""]}));
    assert_eq!(
        b["inferenceConfig"],
        json!({"maxTokens": 200, "temperature": 1.0, "topP": 0.9, "stopSequences": ["END"]})
    );
    let b = converse(json!({"model": "m", "messages": [], "max_tokens": 100, "stop": "\n\n"}));
    assert_eq!(
        b["inferenceConfig"],
        json!({"maxTokens": 100, "stopSequences": ["\n\n"]})
    );
}

#[test]
fn max_tokens_falls_back_to_the_models_then_the_default() {
    let req = ChatRequest::parse(br#"{"model":"m","messages":[]}"#).unwrap();
    let b: Value = serde_json::from_slice(&body(&model(Some(8192)), &req)).unwrap();
    assert_eq!(b["inferenceConfig"]["maxTokens"], 8192);
}

#[test]
fn images_from_data_urls_become_image_blocks_and_web_urls_are_dropped() {
    let b = messages(json!([{"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/jpg;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/tiff;base64,BBBB"}},
        {"type": "input_audio", "input_audio": {"data": "x", "format": "wav"}}]}]));
    assert_eq!(
        b["messages"][0]["content"],
        json!([{"text": "What is this?"},
            {"image": {"format": "jpeg", "source": {"bytes": "AAAA"}}}])
    );
}

#[test]
fn a_tool_round_trip_becomes_tool_use_and_tool_result_in_alternating_turns() {
    let b = messages(json!([
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "not json"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\":20}"},
        {"role": "tool", "tool_call_id": "call_2", "content": ""},
        {"role": "user", "content": "Thanks. Which is warmer?"}]));
    assert_eq!(
        b["messages"],
        json!([
            {"role": "user", "content": [{"text": "Weather in Paris and Rome?"}]},
            {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "call_1", "name": "get_weather", "input": {"city": "Paris"}}},
                {"toolUse": {"toolUseId": "call_2", "name": "get_weather", "input": {}}}]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "call_1", "content": [{"text": "{\"temp\":20}"}]}},
                {"toolResult": {"toolUseId": "call_2", "content": [{"text": "."}]}},
                {"text": "Thanks. Which is warmer?"}]},
        ])
    );
}

#[test]
fn a_history_with_tool_calls_declares_its_tools_when_the_request_sends_none() {
    let b = messages(json!([
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "ns.lookup", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "r"}]));
    assert_eq!(
        b["toolConfig"],
        json!({"tools": [{"toolSpec": {"name": "ns_lookup", "inputSchema": {"json": {"type": "object"}}}}]})
    );
    assert_eq!(
        b["messages"][1]["content"][0]["toolUse"]["name"],
        "ns_lookup"
    );
}

#[test]
fn sanitized_tool_names_match_between_tool_spec_and_tool_use() {
    let b = converse(json!({"model": "m",
        "tools": [{"type": "function", "function": {"name": "web.search", "parameters": {"type": "object"}}}],
        "tool_choice": "required",
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "web.search", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "r"}]}));
    let spec = &b["toolConfig"]["tools"][0]["toolSpec"]["name"];
    assert_eq!(spec, "web_search");
    assert_eq!(&b["messages"][1]["content"][0]["toolUse"]["name"], spec);
    assert_eq!(b["toolConfig"]["toolChoice"], json!({"any": {}}));
}

#[test]
fn consecutive_turns_of_one_role_merge_and_blank_text_is_left_out() {
    let b = messages(json!([
        {"role": "user", "content": "a"},
        {"role": "user", "content": [{"type": "text", "text": "b"}, {"type": "text", "text": "  "}]},
        {"role": "assistant", "content": "  \n"},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "x"},
        {"role": "assistant", "content": [{"type": "text", "text": "y"}]}]));
    assert_eq!(
        b["messages"],
        json!([
            {"role": "user", "content": [{"text": "a"}, {"text": "b"}, {"text": "c"}]},
            {"role": "assistant", "content": [{"text": "x"}, {"text": "y"}]},
        ])
    );
}

#[test]
fn a_conversation_opening_with_the_assistant_gets_a_placeholder_user_turn_first() {
    let b = messages(json!([
        {"role": "system", "content": "s"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Hi"}]));
    assert_eq!(
        b["messages"],
        json!([
            {"role": "user", "content": [{"text": "."}]},
            {"role": "assistant", "content": [{"text": "Hello! How can I help?"}]},
            {"role": "user", "content": [{"text": "Hi"}]},
        ])
    );
}

#[test]
fn blank_system_messages_are_left_out_and_no_messages_is_an_empty_array() {
    let b = converse(json!({"model": "m", "messages": [{"role": "system", "content": " "}]}));
    assert_eq!(b["messages"], json!([]));
    assert!(b.get("system").is_none());
    let b = converse(json!({"model": "m"}));
    assert_eq!(b["messages"], json!([]));
}

#[test]
fn parameters_converse_has_no_field_for_are_dropped() {
    let b = converse(
        json!({"model": "m", "messages": [], "n": 2, "seed": 1, "user": "u",
        "response_format": {"type": "json_object"}, "frequency_penalty": 1, "stream": true,
        "parallel_tool_calls": false, "reasoning_effort": "high"}),
    );
    let keys: Vec<&String> = b.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["inferenceConfig", "messages"]);
}
