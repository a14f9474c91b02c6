//! `tools` and `tool_choice` → Converse `toolConfig`, and the tool-name rule both it and the
//! history's `toolUse` blocks follow.

use crate::providers::turns::functions;
use serde_json::{json, Map, Value};

/// Converse's longest tool name.
const MAX_NAME: usize = 64;

/// A tool name Converse accepts (`[a-zA-Z0-9_-]{1,64}`): other characters become `_` and the
/// name is cut at 64 characters; an empty name is `_`. The same mapping is applied in `toolSpec`
/// and `toolUse`, so a declared tool and its earlier calls still match. (OpenAI's own rule for
/// function names is the same, so a name a caller could send to OpenAI passes unchanged.)
pub fn sanitize(name: &str) -> String {
    let out: String = name
        .chars()
        .take(MAX_NAME)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        "_".to_owned()
    } else {
        out
    }
}

/// The `toolConfig`, if one is needed:
/// - the request's function tools as `toolSpec`s, unless `tool_choice` is `none` (Converse has
///   no "none": the tools are left out, so the model cannot call one);
/// - otherwise, when the history holds tool calls, those tools with an open object schema,
///   since Converse refuses `toolUse`/`toolResult` blocks without a `toolConfig`.
///
/// `toolChoice` goes with the request's tools only: `required` → `any`, a named function →
/// `tool`; `auto` is Converse's default and is left out, as some models refuse any
/// `toolChoice`.
pub fn tool_config(src: &Map<String, Value>, history_tools: &[String]) -> Option<Value> {
    let choice = src.get("tool_choice");
    let none = choice.and_then(Value::as_str) == Some("none");
    let mut specs: Vec<Value> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    if !none {
        for f in functions(src.get("tools")) {
            let name = sanitize(f.get("name").and_then(Value::as_str).unwrap_or(""));
            // Converse refuses two tools of one name; the first is kept.
            if names.contains(&name) {
                continue;
            }
            let schema = f
                .get("parameters")
                .filter(|p| p.is_object())
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            let mut spec = json!({"name": name, "inputSchema": {"json": schema}});
            if let Some(d) = f
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
            {
                spec["description"] = d.into();
            }
            specs.push(json!({ "toolSpec": spec }));
            names.push(name);
        }
    }
    if specs.is_empty() {
        if history_tools.is_empty() {
            return None;
        }
        let declared: Vec<Value> = history_tools
            .iter()
            .map(|name| json!({"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}}))
            .collect();
        return Some(json!({ "tools": declared }));
    }
    let mut config = json!({ "tools": specs });
    match choice {
        Some(Value::String(s)) if s == "required" => config["toolChoice"] = json!({"any": {}}),
        Some(Value::Object(o)) => {
            if let Some(name) = o
                .get("function")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
            {
                config["toolChoice"] = json!({"tool": {"name": sanitize(name)}});
            }
        }
        _ => {}
    }
    Some(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(o) => o,
            _ => Map::new(),
        }
    }

    const WEATHER: &str = r#"{"type":"function","function":{"name":"get.weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}"#;

    #[test]
    fn tool_names_outside_the_converse_rule_are_sanitized_and_cut_at_64() {
        assert_eq!(sanitize("get_weather-2"), "get_weather-2");
        assert_eq!(sanitize("ns.get weather/é"), "ns_get_weather__");
        assert_eq!(sanitize(&"a".repeat(70)).len(), 64);
        assert_eq!(sanitize(""), "_");
    }

    #[test]
    fn function_tools_become_tool_specs_with_the_json_schema() {
        let tools: Value = serde_json::from_str(&format!("[{WEATHER},{WEATHER}]")).unwrap();
        let c = tool_config(&src(json!({"tools": tools})), &[]).unwrap();
        assert_eq!(
            c,
            json!({"tools": [{"toolSpec": {"name": "get_weather", "description": "Weather",
                "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}}}}]})
        );
    }

    #[test]
    fn tool_choice_maps_to_any_or_tool_and_auto_is_left_out() {
        let tools: Value = serde_json::from_str(&format!("[{WEATHER}]")).unwrap();
        let with = |choice: Value| {
            tool_config(&src(json!({"tools": tools, "tool_choice": choice})), &[]).unwrap()
        };
        assert_eq!(with(json!("required"))["toolChoice"], json!({"any": {}}));
        assert_eq!(
            with(json!({"type": "function", "function": {"name": "get.weather"}}))["toolChoice"],
            json!({"tool": {"name": "get_weather"}})
        );
        assert!(with(json!("auto")).get("toolChoice").is_none());
    }

    #[test]
    fn tool_choice_none_leaves_the_tools_out_but_history_tools_are_still_declared() {
        let tools: Value = serde_json::from_str(&format!("[{WEATHER}]")).unwrap();
        let none = src(json!({"tools": tools, "tool_choice": "none"}));
        assert_eq!(tool_config(&none, &[]), None);
        assert_eq!(
            tool_config(&none, &["lookup".to_owned()]),
            Some(
                json!({"tools": [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}]})
            )
        );
    }

    #[test]
    fn no_tools_and_no_history_tools_need_no_tool_config() {
        assert_eq!(tool_config(&src(json!({"tool_choice": "auto"})), &[]), None);
    }
}
