use super::*;
use crate::config::admin_body::{parse_body, ModelBody};
use crate::config::ModelId;
use crate::providers::gemini::contents::UNSIGNED;
use serde_json::json;

fn model(caps: &str) -> CatalogModel {
    let m: ModelBody = parse_body(
        format!(r#"{{"provider":"p","upstream_model":"gemini-3-pro","context_window":8000,"capabilities":{caps}}}"#).as_bytes(),
    )
    .unwrap();
    m.validate(ModelId::parse("m").unwrap()).unwrap()
}

fn gemini(req: Value) -> Value {
    gemini_for(&model(r#"["chat"]"#), req)
}

fn gemini_for(model: &CatalogModel, req: Value) -> Value {
    let req = ChatRequest::parse(req.to_string().as_bytes()).unwrap();
    serde_json::from_slice(&body(model, &req)).unwrap()
}

fn chat(messages: Value) -> Value {
    gemini(json!({"model": "m", "messages": messages}))
}

#[test]
fn system_and_developer_messages_become_the_system_instruction() {
    let b = chat(json!([
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": [{"type": "text", "text": "Use French."}]},
        {"role": "user", "content": "hi"},
    ]));
    assert_eq!(
        b["systemInstruction"],
        json!({"parts": [{"text": "Be brief.\n\nUse French."}]})
    );
    assert_eq!(
        b["contents"],
        json!([{"role": "user", "parts": [{"text": "hi"}]}])
    );
    assert!(chat(json!([{"role": "user", "content": "x"}]))
        .get("systemInstruction")
        .is_none());
}

#[test]
fn assistant_turns_are_model_turns_and_consecutive_turns_of_one_role_merge() {
    let b = chat(json!([
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "c"},
        {"role": "assistant", "content": null},
        {"role": "user", "content": ""},
        {"role": "user", "content": "d"},
    ]));
    assert_eq!(
        b["contents"],
        json!([
            {"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
            {"role": "model", "parts": [{"text": "c"}]},
            {"role": "user", "parts": [{"text": "d"}]},
        ])
    );
}

#[test]
fn data_url_images_are_inline_data_and_other_urls_are_file_data_typed_by_extension() {
    let b = chat(json!([{"role": "user", "content": [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://x.test/cat.WEBP?s=1"}},
        {"type": "image_url", "image_url": {"url": "gs://bucket/photo"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"}},
        {"type": "file", "file": {"file_id": "file-123"}},
        {"type": "refusal", "refusal": "x"},
    ]}]));
    assert_eq!(
        b["contents"][0]["parts"],
        json!([
            {"text": "look"},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
            {"fileData": {"mimeType": "image/webp", "fileUri": "https://x.test/cat.WEBP?s=1"}},
            {"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://bucket/photo"}},
            {"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}},
            {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0="}},
        ])
    );
}

#[test]
fn tools_declare_their_json_schema_as_parameters_json_schema_and_an_empty_one_not_at_all() {
    let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"city": {"type": "string"}}, "additionalProperties": false});
    let b = gemini(
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}],
        "tools": [
            {"type": "function", "function": {"name": "weather", "description": "Weather.", "parameters": schema, "strict": true}},
            {"type": "function", "function": {"name": "now"}},
            {"type": "function", "function": {"name": "ping", "parameters": {}}},
            {"type": "web_search"},
        ]}),
    );
    assert_eq!(
        b["tools"],
        json!([{"functionDeclarations": [
            {"name": "weather", "description": "Weather.", "parametersJsonSchema": schema},
            {"name": "now"},
            {"name": "ping"},
        ]}])
    );
    assert!(
        b.get("toolConfig").is_none(),
        "no tool_choice, no toolConfig"
    );
}

#[test]
fn tool_choice_becomes_a_function_calling_mode() {
    let with = |choice: Value| {
        gemini(
            json!({"model": "m", "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": choice}),
        )["toolConfig"]
            .clone()
    };
    let mode = |m: &str| json!({"functionCallingConfig": {"mode": m}});
    assert_eq!(with(json!("auto")), mode("AUTO"));
    assert_eq!(with(json!("required")), mode("ANY"));
    assert_eq!(with(json!("none")), mode("NONE"));
    assert_eq!(
        with(json!({"type": "function", "function": {"name": "f"}})),
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}})
    );
    let without_tools = gemini(json!({"model": "m", "messages": [], "tool_choice": "required"}));
    assert!(without_tools.get("toolConfig").is_none());
}

#[test]
fn assistant_tool_calls_are_function_calls_and_an_unsigned_first_call_skips_the_check() {
    let b = chat(json!([
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "Let me check.", "reasoning_content": "hmm",
         "tool_calls": [
            {"id": "call_abc", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}},
            {"id": "call_def", "type": "function", "function": {"name": "g", "arguments": "not json"}},
        ]},
    ]));
    assert_eq!(
        b["contents"][1],
        json!({"role": "model", "parts": [
            {"text": "Let me check."},
            {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": UNSIGNED},
            {"functionCall": {"name": "g", "args": {}}},
        ]})
    );
}

#[test]
fn a_signature_carried_in_the_id_goes_back_on_its_function_call() {
    let id = crate::providers::gemini::tool_id::call_id(None, "r", 0, Some("c2ln+/w="));
    let b = chat(json!([
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    ]));
    assert_eq!(
        b["contents"][1]["parts"],
        json!([{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln+/w="}])
    );
}

#[test]
fn parallel_tool_results_share_one_user_turn_named_after_their_calls() {
    let b = chat(json!([
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "time", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"temp\": 20}"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "noon"}]},
        {"role": "user", "content": "thanks"},
    ]));
    assert_eq!(
        b["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "weather", "response": {"temp": 20}}},
            {"functionResponse": {"name": "time", "response": {"content": "noon"}}},
            {"text": "thanks"},
        ]})
    );
    assert_eq!(b["contents"].as_array().unwrap().len(), 3);
}

#[test]
fn a_function_response_is_always_an_object() {
    let result = |content: Value| {
        chat(json!([
            {"role": "assistant", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": content},
        ]))["contents"][1]["parts"][0]["functionResponse"]["response"]
            .clone()
    };
    assert_eq!(result(json!("[1,2]")), json!({"content": [1, 2]}));
    assert_eq!(result(json!("42")), json!({"content": 42}));
    assert_eq!(
        result(json!("plain text")),
        json!({"content": "plain text"})
    );
    assert_eq!(result(json!("")), json!({"content": ""}));
    assert_eq!(result(json!("{\"ok\":true}")), json!({"ok": true}));
}

#[test]
fn a_result_for_an_unknown_call_takes_the_messages_own_name_or_a_placeholder() {
    let b = chat(json!([
        {"role": "tool", "tool_call_id": "gone", "name": "lookup", "content": "x"},
        {"role": "tool", "tool_call_id": "gone2", "content": "y"},
    ]));
    let parts = &b["contents"][0]["parts"];
    assert_eq!(parts[0]["functionResponse"]["name"], "lookup");
    assert_eq!(parts[1]["functionResponse"]["name"], "tool");
}

#[test]
fn sampling_and_length_parameters_map_to_the_generation_config() {
    let b = gemini(json!({"model": "m", "messages": [],
        "max_tokens": 10, "max_completion_tokens": 20, "temperature": 3.5, "top_p": 0.9,
        "stop": ["a", "", "b", "c", "d", "e", "f"], "seed": 7,
        "n": 2, "presence_penalty": 1, "frequency_penalty": 1, "logprobs": true,
        "user": "u", "parallel_tool_calls": false}));
    assert_eq!(
        b["generationConfig"],
        json!({"maxOutputTokens": 20, "temperature": 2.0, "topP": 0.9,
            "stopSequences": ["a", "b", "c", "d", "e"], "seed": 7})
    );
    let b = gemini(
        json!({"model": "m", "messages": [], "max_tokens": 10, "stop": "END",
        "seed": 1_i64 << 40, "temperature": -1}),
    );
    assert_eq!(
        b["generationConfig"],
        json!({"maxOutputTokens": 10, "stopSequences": ["END"], "temperature": 0.0})
    );
}

#[test]
fn only_gemini_fields_reach_the_body() {
    let b = gemini(
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}],
        "stream": true, "stream_options": {"include_usage": true}, "metadata": {"a": "b"},
        "service_tier": "auto", "store": true, "logit_bias": {"1": 1}, "modalities": ["text"]}),
    );
    let keys: Vec<&String> = b.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["contents"]);
}

#[test]
fn response_format_asks_for_json_held_to_the_schema_as_written() {
    let schema =
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"});
    let format = |f: Value| {
        gemini(json!({"model": "m", "messages": [], "response_format": f}))
            .get("generationConfig")
            .cloned()
    };
    assert_eq!(
        format(json!({"type": "json_schema", "json_schema": {"name": "s", "schema": schema}})),
        Some(json!({"responseMimeType": "application/json", "responseJsonSchema": schema}))
    );
    assert_eq!(
        format(json!({"type": "json_object"})),
        Some(json!({"responseMimeType": "application/json"}))
    );
    assert_eq!(format(json!({"type": "text"})), None);
}

#[test]
fn reasoning_effort_sets_a_thinking_budget_only_for_models_that_reason() {
    let req = json!({"model": "m", "messages": [], "reasoning_effort": "high"});
    assert!(gemini(req.clone()).get("generationConfig").is_none());
    let b = gemini_for(&model(r#"["chat","reasoning"]"#), req);
    assert_eq!(
        b["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 24_576, "includeThoughts": true})
    );
    let b = gemini_for(
        &model(r#"["chat","reasoning"]"#),
        json!({"model": "m", "messages": [], "thinking": {"type": "enabled", "budget_tokens": 5000}}),
    );
    assert_eq!(
        b["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        5000
    );
}
