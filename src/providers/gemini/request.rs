//! Chat-completions request → `generateContent` request. Every OpenAI parameter is either mapped
//! or dropped here on purpose; nothing is sent raw to draw a 400 that would stop the cascade for
//! a reason the caller did not cause. The model is named in the path, not the body.
//!
//! Dropped: `n` (one candidate is read), `presence_penalty` and `frequency_penalty` (several
//! Gemini models refuse them with a 400), `logit_bias`, `logprobs`, `top_logprobs`, `user`,
//! `parallel_tool_calls`, `service_tier`, `store`, `metadata`, `modalities`, `audio`,
//! `prediction`, `web_search_options`, and `seed` outside Gemini's 32-bit range.

use super::contents;
use crate::api::raw_json::ObjectWriter;
use crate::api::ChatRequest;
use crate::config::{Capability, CatalogModel};
use crate::providers::reasoning;
use crate::providers::turns::functions;
use serde_json::{json, Map, Value};

/// Gemini accepts at most this many stop sequences.
const MAX_STOP_SEQUENCES: usize = 5;

/// The request as JSON bytes. Everything but `contents` is small and built as a tree; `contents`
/// is translated and written one caller message at a time.
pub fn body(model: &CatalogModel, req: &ChatRequest) -> Vec<u8> {
    let src = &req.tree_without("messages");
    let mut out = Map::new();
    let tools = tools(src.get("tools"));
    if let Some(tools) = tools.as_ref() {
        out.insert("tools".into(), tools.clone());
        if let Some(config) = tool_config(src.get("tool_choice")) {
            out.insert("toolConfig".into(), config);
        }
    }
    let generation = generation_config(src, reasons(model));
    if !generation.is_empty() {
        out.insert("generationConfig".into(), Value::Object(generation));
    }
    // Sized for the translated messages up front, as the Anthropic translation does: parts add
    // a little wrapping to the caller's text.
    let messages_len = req.raw("messages").map_or(0, str::len);
    let mut bytes = Vec::with_capacity(messages_len + messages_len / 8 + 4_096);
    let mut object = ObjectWriter::new(&mut bytes);
    for (k, v) in &out {
        // Writing a Value into a Vec cannot fail.
        let _ = serde_json::to_writer(object.key(k), v);
    }
    let system = contents::write(req.raw("messages"), object.key("contents"));
    if !system.is_empty() {
        let instruction = json!({"parts": [{"text": system}]});
        let _ = serde_json::to_writer(object.key("systemInstruction"), &instruction);
    }
    object.close();
    bytes
}

/// A model that thinks on request says so with the `reasoning` capability; to any other a
/// `thinkingConfig` is not sent, since a model that cannot think refuses it with a 400.
fn reasons(model: &CatalogModel) -> bool {
    Capability::parse("reasoning").is_ok_and(|c| model.has_capability(&c))
}

fn generation_config(src: &Map<String, Value>, reasons: bool) -> Map<String, Value> {
    let mut g = Map::new();
    let max = src
        .get("max_completion_tokens")
        .or_else(|| src.get("max_tokens"))
        .and_then(Value::as_u64);
    if let Some(max) = max {
        g.insert("maxOutputTokens".into(), max.min(i32::MAX as u64).into());
    }
    if let Some(t) = src.get("temperature").and_then(Value::as_f64) {
        g.insert("temperature".into(), t.clamp(0.0, 2.0).into());
    }
    if let Some(p) = src.get("top_p").and_then(Value::as_f64) {
        g.insert("topP".into(), p.clamp(0.0, 1.0).into());
    }
    if let Some(stop) = stop_sequences(src.get("stop")) {
        g.insert("stopSequences".into(), stop);
    }
    if let Some(seed) = src.get("seed").and_then(Value::as_i64) {
        if i32::try_from(seed).is_ok() {
            g.insert("seed".into(), seed.into());
        }
    }
    response_format(src.get("response_format"), &mut g);
    let budget = reasoning::thinking_budget(src.get("thinking")).or_else(|| {
        src.get("reasoning_effort")
            .and_then(Value::as_str)
            .and_then(reasoning::budget_for_effort)
            .map(u64::from)
    });
    if let (true, Some(budget)) = (reasons, budget) {
        g.insert(
            "thinkingConfig".into(),
            json!({"thinkingBudget": budget.min(i32::MAX as u64), "includeThoughts": true}),
        );
    }
    g
}

fn stop_sequences(stop: Option<&Value>) -> Option<Value> {
    match stop? {
        Value::String(s) if !s.is_empty() => Some(json!([s])),
        Value::Array(a) => {
            let list: Vec<Value> = a
                .iter()
                .filter(|s| s.as_str().is_some_and(|s| !s.is_empty()))
                .take(MAX_STOP_SEQUENCES)
                .cloned()
                .collect();
            (!list.is_empty()).then_some(Value::Array(list))
        }
        _ => None,
    }
}

/// `json_object` → JSON output; `json_schema` → JSON output held to the schema, sent as
/// `responseJsonSchema` (JSON Schema as written; `responseSchema` refuses keys like `$schema`).
/// `text` and unknown types ask for nothing.
fn response_format(format: Option<&Value>, g: &mut Map<String, Value>) {
    let Some(format) = format else { return };
    match format.get("type").and_then(Value::as_str) {
        Some("json_object") => {
            g.insert("responseMimeType".into(), "application/json".into());
        }
        Some("json_schema") => {
            g.insert("responseMimeType".into(), "application/json".into());
            let schema = format.get("json_schema").and_then(|s| s.get("schema"));
            if let Some(schema) = schema.filter(|s| s.is_object()) {
                g.insert("responseJsonSchema".into(), schema.clone());
            }
        }
        _ => {}
    }
}

/// Function tools as one `functionDeclarations` list. The caller's JSON Schema goes in
/// `parametersJsonSchema`, which takes JSON Schema as written (`parameters` takes Google's
/// OpenAPI subset and refuses keys such as `$schema` or `additionalProperties`).
fn tools(tools: Option<&Value>) -> Option<Value> {
    let list: Vec<Value> = functions(tools)
        .map(|f| {
            let mut d = Map::new();
            d.insert("name".into(), f.get("name").cloned().unwrap_or_default());
            if let Some(desc) = f.get("description").filter(|d| d.is_string()) {
                d.insert("description".into(), desc.clone());
            }
            // `{}` describes no object, which Gemini refuses; a tool without parameters omits it.
            let params = f
                .get("parameters")
                .filter(|p| p.as_object().is_some_and(|o| !o.is_empty()));
            if let Some(params) = params {
                d.insert("parametersJsonSchema".into(), params.clone());
            }
            Value::Object(d)
        })
        .collect();
    (!list.is_empty()).then(|| json!([{"functionDeclarations": list}]))
}

/// `tool_choice` → `functionCallingConfig`: `auto` → AUTO, `required` → ANY, `none` → NONE, a
/// named function → ANY restricted to that name.
fn tool_config(choice: Option<&Value>) -> Option<Value> {
    let config = match choice? {
        Value::String(s) => match s.as_str() {
            "none" => json!({"mode": "NONE"}),
            "required" => json!({"mode": "ANY"}),
            _ => json!({"mode": "AUTO"}),
        },
        Value::Object(o) => {
            let name = o.get("function")?.get("name")?.as_str()?;
            json!({"mode": "ANY", "allowedFunctionNames": [name]})
        }
        _ => return None,
    };
    Some(json!({"functionCallingConfig": config}))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
