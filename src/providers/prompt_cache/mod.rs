//! Prompt-cache breakpoints injected for providers that cache only where a request marks it
//! (Anthropic's Messages, directly or on Vertex; Claude on Bedrock's Converse). Opt-in per alias
//! or rule (`config::PromptCache`); the caller's own marks always win, so a request that marks
//! anything is sent exactly as built.
//!
//! Where marks go is Anthropic's multi-turn pattern, in prompt order (tools, system, messages):
//! the last tool definition, the end of the system prompt, the user turn before the newest (it
//! reads what the previous request wrote) and the newest user turn (it writes for the next). That
//! is at most four, the most either API takes. A mark whose prefix is shorter than the model's
//! `min_cache_tokens`, by the gateway's estimate (`usage::estimate`), is left out: the provider
//! would ignore it and it would take a slot.

pub mod anthropic;
pub mod bedrock;
mod layout;
#[cfg(test)]
mod tests;

use crate::config::{CacheTtl, CatalogModel};
use crate::providers::Dialect;
use serde_json::Value;

/// The `anthropic-beta` value Anthropic's 1-hour cache tier needs.
pub const EXTENDED_TTL_BETA: &str = "extended-cache-ttl-2025-04-11";

/// The most cache marks one request may carry (Anthropic's and Bedrock's limit).
pub const MAX_MARKS: usize = 4;

/// Where a mark can go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// After the last tool definition.
    LastTool,
    /// At the end of the system prompt.
    System,
    /// At the end of the message at this index.
    Message(usize),
}

/// A place a mark could go, and the estimated tokens of the prompt up to and including it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spot {
    pub place: Place,
    pub prefix_tokens: u64,
}

/// How a model's minimum applies to a mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Minimum {
    /// Anthropic: the whole prefix up to the mark reaches the minimum.
    Prefix,
    /// Bedrock: each checkpoint holds the minimum beyond the previous one.
    SincePrevious,
}

/// The spots marked, in prompt order: each whose prefix reaches `min` by `rule`, at most
/// `MAX_MARKS`.
pub fn choose(spots: &[Spot], min: u64, rule: Minimum) -> Vec<Place> {
    let mut chosen = Vec::new();
    let mut previous = 0u64;
    for spot in spots {
        let counted = match rule {
            Minimum::Prefix => spot.prefix_tokens,
            Minimum::SincePrevious => spot.prefix_tokens.saturating_sub(previous),
        };
        if counted >= min && chosen.len() < MAX_MARKS {
            chosen.push(spot.place);
            previous = spot.prefix_tokens;
        }
    }
    chosen
}

/// The body built for a candidate, with marks injected at `ttl` when its family caches only where
/// marked; any other body, or one whose marks all fall short, is returned as it came.
pub fn inject(dialect: Dialect, model: &CatalogModel, ttl: CacheTtl, body: Vec<u8>) -> Vec<u8> {
    let min = u64::from(model.min_cache_tokens);
    let marked = match dialect {
        Dialect::Anthropic => anthropic::inject(&body, ttl, min),
        Dialect::Bedrock if bedrock::is_claude(&model.upstream_model) => {
            bedrock::inject(&body, ttl, min)
        }
        _ => None,
    };
    marked.unwrap_or(body)
}

/// Whether a request (chat-completions or Messages shape, field by field as sent) carries a cache
/// mark of its own: a top-level `cache_control`, or one on a tool, a system block, a content part
/// or block, or a block inside a tool result.
pub fn carries_marks<'a>(fields: impl Iterator<Item = (&'a str, &'a str)>) -> bool {
    const KEY: &str = "\"cache_control\"";
    fields
        .filter(|(name, raw)| *name == "cache_control" || raw.contains(KEY))
        .any(|(name, raw)| match name {
            "cache_control" => true,
            "tools" | "system" => list_marked(raw),
            "messages" => layout::elements(raw)
                .unwrap_or_default()
                .iter()
                .filter(|m| m.get().contains(KEY))
                .any(|m| {
                    let m: Value = serde_json::from_str(m.get()).unwrap_or_default();
                    m.get("content").is_some_and(|c| {
                        c.as_array()
                            .into_iter()
                            .flatten()
                            .any(|b| has_mark(b) || b.get("content").is_some_and(list_has_mark))
                    })
                }),
            _ => false,
        })
}

fn list_marked(raw: &str) -> bool {
    serde_json::from_str::<Value>(raw).is_ok_and(|v| list_has_mark(&v))
}

fn list_has_mark(v: &Value) -> bool {
    v.as_array().into_iter().flatten().any(has_mark)
}

/// A block, part or tool marked itself (a chat tool may carry it inside its `function`).
fn has_mark(b: &Value) -> bool {
    b.get("cache_control").is_some()
        || b.get("function")
            .and_then(|f| f.get("cache_control"))
            .is_some()
}

/// The caller's `anthropic-beta` with the 1-hour tier's value added: comma-separated, each value
/// once.
pub fn merged_beta(caller: Option<&str>) -> String {
    let caller = caller.map(str::trim).filter(|c| !c.is_empty());
    match caller {
        Some(c) if c.split(',').any(|v| v.trim() == EXTENDED_TTL_BETA) => c.to_owned(),
        Some(c) => format!("{c},{EXTENDED_TTL_BETA}"),
        None => EXTENDED_TTL_BETA.to_owned(),
    }
}
