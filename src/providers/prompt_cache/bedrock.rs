//! Cache checkpoints injected into a Converse body for Claude on Bedrock: a `cachePoint` is a
//! block of its own, appended after the part it closes (`toolConfig.tools`, `system`, a user
//! turn's `content`). Bedrock counts each checkpoint's minimum from the previous one, and wants
//! TTLs that never increase along the request (tools, then system, then messages): every
//! checkpoint of one request carries the same TTL, so they never do.

use super::layout::Marking;
use super::{Minimum, Place};
use crate::config::CacheTtl;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// Only Anthropic's Claude models take checkpoints this way: an upstream model id naming
/// `anthropic.` (a model or inference profile, `us.anthropic.claude-...`) or `claude`. An
/// application inference profile's ARN names neither and is sent as built.
pub fn is_claude(upstream_model: &str) -> bool {
    let id = upstream_model.to_ascii_lowercase();
    id.contains("anthropic.") || id.contains("claude")
}

/// A checkpoint block at `ttl` (the 5-minute tier is Bedrock's default and carries no `ttl`).
pub fn cache_point(ttl: CacheTtl) -> Value {
    match ttl {
        CacheTtl::FiveMinutes => json!({"cachePoint": {"type": "default"}}),
        CacheTtl::OneHour => json!({"cachePoint": {"type": "default", "ttl": "1h"}}),
    }
}

#[derive(serde::Deserialize)]
struct ToolConfig<'a> {
    #[serde(borrow, default)]
    tools: Vec<&'a RawValue>,
}

/// The body with its checkpoints, or `None` when none holds `min` tokens beyond the previous.
pub fn inject(body: &[u8], ttl: CacheTtl, min: u64) -> Option<Vec<u8>> {
    let mut body = Marking::read(body)?;
    let tool_config: Option<ToolConfig<'_>> = body
        .raw("toolConfig")
        .and_then(|t| serde_json::from_str(t).ok());
    let tools = tool_config.map(|t| t.tools).unwrap_or_default();
    let places = body.places(tools, min, Minimum::SincePrevious)?;
    let point = cache_point(ttl);
    let append = |list: &mut Value| {
        if let Some(list) = list.as_array_mut() {
            list.push(point.clone());
        }
    };
    for place in places {
        match place {
            Place::LastTool => {
                let mut config: Value = serde_json::from_str(body.raw("toolConfig")?).ok()?;
                append(config.get_mut("tools")?);
                body.replace("toolConfig", config.to_string());
            }
            Place::System => {
                let mut system: Value = serde_json::from_str(body.raw("system")?).ok()?;
                append(&mut system);
                body.replace("system", system.to_string());
            }
            Place::Message(i) => body.edit_message(i, |m| {
                if let Some(content) = m.get_mut("content") {
                    append(content);
                }
            })?,
        }
    }
    Some(body.write())
}
