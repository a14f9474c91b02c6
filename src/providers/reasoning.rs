//! Reasoning compatibility across families. Reasoning state
//! from one family replayed as-is to another corrupts context or draws a 400 that would stop the
//! cascade, so it is stripped or converted, and reasoning parameters are mapped to the target's
//! form or dropped. The table in docs/providers.md is the contract; these functions are it.

use serde_json::Value;

pub use crate::api::chat::REASONING_FIELDS;

/// Thinking budget for an OpenAI `reasoning_effort`.
pub fn budget_for_effort(effort: &str) -> Option<u32> {
    match effort {
        "minimal" => Some(1_024),
        "low" => Some(2_048),
        "medium" => Some(8_192),
        "high" => Some(24_576),
        _ => None,
    }
}

/// The nearest `reasoning_effort` for an Anthropic thinking budget.
pub fn effort_for_budget(budget: u64) -> &'static str {
    match budget {
        0..=2_048 => "low",
        2_049..=12_288 => "medium",
        _ => "high",
    }
}

/// `thinking: {"type": "enabled", "budget_tokens": N}` → N.
pub fn thinking_budget(thinking: Option<&Value>) -> Option<u64> {
    let t = thinking?;
    (t.get("type").and_then(Value::as_str) == Some("enabled"))
        .then(|| t.get("budget_tokens").and_then(Value::as_u64))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effort_and_budget_map_both_ways() {
        for effort in ["low", "medium", "high"] {
            let budget = budget_for_effort(effort).unwrap();
            assert_eq!(effort_for_budget(u64::from(budget)), effort);
        }
        assert_eq!(budget_for_effort("extreme"), None);
    }
}
