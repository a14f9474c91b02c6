//! Chat-completions request → Messages request. Every OpenAI parameter is either mapped or dropped
//! here on purpose (docs/providers.md lists which); nothing is sent raw to draw a 400 that would stop the
//! cascade for a reason the caller did not cause.

use super::DEFAULT_MAX_TOKENS;
use crate::api::raw_json::ObjectWriter;
use crate::api::ChatRequest;
use crate::config::CatalogModel;
use crate::providers::reasoning;
use crate::providers::turns::{call_arguments, each_message, text_of, tool_calls, Turns};
use serde_json::{json, Map, Value};

/// The Messages request as JSON bytes. Everything but `messages` is small and built as a tree;
/// `messages` is translated and written one caller message at a time, so no tree of the whole
/// conversation is ever held.
pub fn body(model: &CatalogModel, req: &ChatRequest) -> Vec<u8> {
    body_for(model, req, Host::Anthropic)
}

/// The same request for Vertex AI: the model is in the URL, and the API version in the body.
pub fn vertex_body(model: &CatalogModel, req: &ChatRequest) -> Vec<u8> {
    body_for(model, req, Host::Vertex)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Host {
    Anthropic,
    Vertex,
}

fn body_for(model: &CatalogModel, req: &ChatRequest, host: Host) -> Vec<u8> {
    let src = &req.tree_without("messages");
    let mut out = Map::new();
    match host {
        Host::Anthropic => out.insert("model".into(), model.upstream_model.clone().into()),
        Host::Vertex => out.insert(
            "anthropic_version".into(),
            crate::providers::address::VERTEX_ANTHROPIC_VERSION.into(),
        ),
    };
    let mut max_tokens = src
        .get("max_completion_tokens")
        .or_else(|| src.get("max_tokens"))
        .and_then(Value::as_u64)
        .or_else(|| model.max_output_tokens.map(u64::from))
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let budget = reasoning::thinking_budget(src.get("thinking")).or_else(|| {
        src.get("reasoning_effort")
            .and_then(Value::as_str)
            .and_then(reasoning::budget_for_effort)
            .map(u64::from)
    });
    if let Some(budget) = budget {
        // Anthropic wants max_tokens above the budget, and no sampling overrides with thinking.
        if max_tokens <= budget {
            max_tokens = max_tokens.saturating_add(budget);
        }
        out.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    } else {
        copy_sampling(src, &mut out);
    }
    out.insert("max_tokens".into(), max_tokens.into());
    if let Some(stop) = stop_sequences(src.get("stop")) {
        out.insert("stop_sequences".into(), stop);
    }
    if let Some(tools) = tools(src.get("tools")) {
        out.insert("tools".into(), tools);
    }
    if let Some(choice) = tool_choice(src) {
        out.insert("tool_choice".into(), choice);
    }
    if let Some(user) = src.get("user").and_then(Value::as_str) {
        out.insert("metadata".into(), json!({"user_id": user}));
    }
    if req.stream {
        out.insert("stream".into(), true.into());
    }
    // Sized for the translated messages up front: growing an 8 MiB buffer by doubling would
    // hold 24 MiB at the moment of the copy. Blocks add a little wrapping to the caller's text.
    let messages_len = req.raw("messages").map_or(0, str::len);
    let mut bytes = Vec::with_capacity(messages_len + messages_len / 8 + 4_096);
    let mut object = ObjectWriter::new(&mut bytes);
    for (k, v) in &out {
        // Writing a Value into a Vec cannot fail.
        let _ = serde_json::to_writer(object.key(k), v);
    }
    match write_messages(req.raw("messages"), object.key("messages")) {
        System::Text(text) if !text.is_empty() => object.string_field("system", &text),
        System::Text(_) => {}
        // Writing a Value into a Vec cannot fail.
        System::Blocks(blocks) => {
            let _ = serde_json::to_writer(object.key("system"), &blocks);
        }
    }
    object.close();
    bytes
}

/// OpenAI's temperature runs 0–2, Anthropic's 0–1: values above 1 are clamped.
fn copy_sampling(src: &Map<String, Value>, out: &mut Map<String, Value>) {
    if let Some(t) = src.get("temperature").and_then(Value::as_f64) {
        out.insert("temperature".into(), t.clamp(0.0, 1.0).into());
    }
    if let Some(p) = src.get("top_p").and_then(Value::as_f64) {
        out.insert("top_p".into(), p.into());
    }
}

fn stop_sequences(stop: Option<&Value>) -> Option<Value> {
    match stop? {
        Value::String(s) => Some(json!([s])),
        Value::Array(a) if !a.is_empty() => Some(Value::Array(a.clone())),
        _ => None,
    }
}

fn tools(tools: Option<&Value>) -> Option<Value> {
    let list: Vec<Value> = function_tools(tools)
        .map(|(t, f)| {
            let mut tool = json!({
                "name": f.get("name").cloned().unwrap_or_default(),
                "input_schema": f.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object"})),
            });
            if let Some(d) = f.get("description") {
                tool["description"] = d.clone();
            }
            // The caller's own cache mark, on the tool or inside its function, is carried.
            if let Some(mark) = t.get("cache_control").or_else(|| f.get("cache_control")) {
                tool["cache_control"] = mark.clone();
            }
            tool
        })
        .collect();
    (!list.is_empty()).then_some(Value::Array(list))
}

/// Each function tool with its definition (`turns::functions` keeps only the definitions).
fn function_tools(tools: Option<&Value>) -> impl Iterator<Item = (&Value, &Value)> {
    let list = tools.and_then(Value::as_array).into_iter().flatten();
    list.filter_map(|t| Some((t, t.get("function")?)))
}

fn tool_choice(src: &Map<String, Value>) -> Option<Value> {
    let mut choice = match src.get("tool_choice")? {
        Value::String(s) if s == "none" => json!({"type": "none"}),
        Value::String(s) if s == "required" => json!({"type": "any"}),
        Value::Object(o) => {
            let name = o.get("function").and_then(|f| f.get("name")).cloned()?;
            json!({"type": "tool", "name": name})
        }
        _ => json!({"type": "auto"}),
    };
    if src.get("parallel_tool_calls") == Some(&Value::Bool(false)) {
        choice["disable_parallel_tool_use"] = true.into();
    }
    Some(choice)
}

/// The system prompt: its messages' text joined, or, when any of their parts carries a cache
/// mark, text blocks that keep it (a joined string would lose where the mark stood).
enum System {
    Text(String),
    Blocks(Vec<Value>),
}

/// Writes the `messages` array to `out` and returns the system prompt. System and developer
/// messages become `system`; tool results become user turns; consecutive turns of one role merge,
/// since Anthropic wants them to alternate.
fn write_messages(messages: Option<&str>, out: &mut Vec<u8>) -> System {
    let mut system: Vec<Value> = Vec::new();
    let mut turns = Turns::start(out, "content");
    each_message(messages, |m| {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let (role, blocks) = match role {
            "system" | "developer" => {
                system.push(m.get("content").cloned().unwrap_or_default());
                return;
            }
            "assistant" => ("assistant", assistant_blocks(&m)),
            "tool" => ("user", vec![tool_result(&m)]),
            _ => ("user", content_blocks(m.get("content"))),
        };
        if blocks.is_empty() {
            return;
        }
        turns.turn(role);
        blocks.iter().for_each(|b| turns.block(b));
    });
    turns.finish();
    let marked = |c: &Value| {
        c.as_array()
            .is_some_and(|ps| ps.iter().any(|p| p.get("cache_control").is_some()))
    };
    if !system.iter().any(marked) {
        let texts: Vec<String> = system.iter().map(|c| text_of(Some(c))).collect();
        return System::Text(texts.join("\n\n"));
    }
    System::Blocks(
        system
            .iter()
            .flat_map(|c| content_blocks(Some(c)))
            .filter(|b| b["type"] == "text")
            .collect(),
    )
}

/// Text and image parts; other part types (audio, files) have no Messages equivalent here and
/// are dropped.
fn content_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(s)) if !s.is_empty() => vec![json!({"type": "text", "text": s})],
        Some(Value::Array(parts)) => parts.iter().filter_map(part).collect(),
        _ => Vec::new(),
    }
}

/// One content part as a block, with the part's own cache mark carried.
fn part(p: &Value) -> Option<Value> {
    let mut block = match p.get("type")?.as_str()? {
        "text" => json!({"type": "text", "text": p.get("text")?}),
        "image_url" => {
            let url = p.get("image_url")?.get("url")?.as_str()?;
            json!({"type": "image", "source": image_source(url)})
        }
        _ => return None,
    };
    if let Some(mark) = p.get("cache_control") {
        block["cache_control"] = mark.clone();
    }
    Some(block)
}

/// `data:image/png;base64,...` → a base64 source; anything else is a URL source.
fn image_source(url: &str) -> Value {
    if let Some((meta, data)) = url.strip_prefix("data:").and_then(|r| r.split_once(',')) {
        if let Some(media_type) = meta.strip_suffix(";base64") {
            return json!({"type": "base64", "media_type": media_type, "data": data});
        }
    }
    json!({"type": "url", "url": url})
}

/// An assistant turn: signed thinking blocks first (the only reasoning Anthropic accepts back),
/// then text, then tool calls. Unsigned reasoning from another family is dropped.
fn assistant_blocks(m: &Value) -> Vec<Value> {
    let mut blocks: Vec<Value> = m
        .get("thinking_blocks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| match b.get("type").and_then(Value::as_str) {
            Some("thinking") => b
                .get("signature")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty()),
            Some("redacted_thinking") => b.get("data").is_some(),
            _ => false,
        })
        .cloned()
        .collect();
    blocks.extend(content_blocks(m.get("content")));
    for call in tool_calls(m) {
        let f = call.get("function");
        let input = call_arguments(f);
        blocks.push(json!({
            "type": "tool_use",
            "id": call.get("id").cloned().unwrap_or_default(),
            "name": f.and_then(|f| f.get("name")).cloned().unwrap_or_default(),
            "input": input,
        }));
    }
    blocks
}

/// A tool message as a `tool_result` block; a cache mark on any of its parts marks the block.
fn tool_result(m: &Value) -> Value {
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": m.get("tool_call_id").cloned().unwrap_or_default(),
        "content": text_of(m.get("content")),
    });
    let parts = m
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    if let Some(mark) = parts.filter_map(|p| p.get("cache_control")).next_back() {
        block["cache_control"] = mark.clone();
    }
    block
}
