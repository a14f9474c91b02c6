//! Task detection on real request shapes, through each surface's chat view.

use super::*;
use crate::surfaces::{Inbound, Surface};

fn judged(surface: Surface, body: &str, agent: Agent) -> Task {
    let inbound = Inbound::parse(surface, body.as_bytes().to_vec(), 10_000, None, None).unwrap();
    task(inbound.chat(), agent)
}

/// A Claude Code turn as it reaches `/v1/messages` (abridged): its system blocks, its tools
/// (`Bash`, `Edit`, `Read`, ...) and the user's prose.
const CLAUDE_CODE: &str = r#"{"model":"claude-sonnet-4-20250514","max_tokens":32000,"stream":true,
  "system":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude.","cache_control":{"type":"ephemeral"}}],
  "messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>As you answer the user's questions, you can use the following context</system-reminder>"},
    {"type":"text","text":"why does the login page redirect twice?"}]}],
  "tools":[{"name":"Task","description":"Launch a new agent","input_schema":{"type":"object","properties":{"prompt":{"type":"string"}}}},
    {"name":"Bash","description":"Executes a given bash command","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},
    {"name":"Glob","description":"Fast file pattern matching","input_schema":{"type":"object","properties":{"pattern":{"type":"string"}}}},
    {"name":"Grep","description":"A powerful search tool","input_schema":{"type":"object","properties":{"pattern":{"type":"string"}}}},
    {"name":"Read","description":"Reads a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}}}},
    {"name":"Edit","description":"Performs exact string replacements","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}}}},
    {"name":"Write","description":"Writes a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}}}}],
  "metadata":{"user_id":"user_abc_account__session_123"}}"#;

/// A Codex CLI turn on `/v1/responses` (abridged): `shell`, `update_plan` and `apply_patch`
/// as function tools, the user's prose as input.
const CODEX: &str = r#"{"model":"gpt-5-codex","instructions":"You are Codex, based on GPT-5.","stream":true,
  "input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"add a --verbose flag to the cli"}]}],
  "tools":[{"type":"function","name":"shell","description":"Runs a shell command","strict":false,"parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}},
    {"type":"function","name":"update_plan","description":"Updates the task plan","strict":false,"parameters":{"type":"object","properties":{}}},
    {"type":"function","name":"apply_patch","description":"Edit files","strict":false,"parameters":{"type":"object","properties":{"input":{"type":"string"}}}}],
  "tool_choice":"auto","parallel_tool_calls":false}"#;

/// An SDK chat completion: a question, no tools.
const SDK_CHAT: &str = r#"{"model":"gpt-4o-mini","messages":[
  {"role":"system","content":"You are a helpful assistant."},
  {"role":"user","content":"What is a good name for a bakery in Lisbon?"}]}"#;

#[test]
fn claude_codes_request_declares_coding_tools_so_it_is_code_whoever_sends_it() {
    assert_eq!(
        judged(Surface::Messages, CLAUDE_CODE, Agent::Unknown),
        Task::Code
    );
    assert_eq!(
        judged(Surface::Messages, CLAUDE_CODE, Agent::ClaudeCode),
        Task::Code
    );
}

#[test]
fn codexs_request_declares_shell_and_apply_patch_so_it_is_code() {
    assert_eq!(
        judged(Surface::Responses, CODEX, Agent::Unknown),
        Task::Code
    );
}

#[test]
fn an_sdk_chat_with_no_coding_tool_and_prose_is_chat_unless_a_coding_agent_sent_it() {
    assert_eq!(
        judged(Surface::Chat, SDK_CHAT, Agent::OpenaiPython),
        Task::Chat
    );
    assert_eq!(judged(Surface::Chat, SDK_CHAT, Agent::Codex), Task::Code);
}

#[test]
fn tool_names_match_case_insensitively_and_other_tools_do_not_make_code() {
    let tools = |name: &str| {
        format!(r#"[{{"type":"function","function":{{"name":"{name}","parameters":{{}}}}}}]"#)
    };
    for name in [
        "bash",
        "MultiEdit",
        "str_replace_based_edit_tool",
        "NotebookEdit",
    ] {
        assert!(declares_coding_tool(&tools(name)), "{name}");
    }
    for name in ["get_weather", "search", "readme"] {
        assert!(!declares_coding_tool(&tools(name)), "{name}");
    }
    let weather = r#"{"model":"m","messages":[{"role":"user","content":"Weather in Oslo?"}],
        "tools":[{"type":"function","function":{"name":"get_weather","parameters":{}}}]}"#;
    assert_eq!(judged(Surface::Chat, weather, Agent::Unknown), Task::Chat);
}

#[test]
fn a_last_user_turn_that_is_mostly_code_makes_code() {
    let fenced = "Why does this fail?\n```rust\nlet x: u8 = 300;\n```";
    assert!(mostly_code(fenced));
    let pasted = "def add(a, b):\n    return a + b\n\nprint(add(1, 2));\nimport os";
    assert!(mostly_code(pasted));
    let prose = "I went to the market.\nIt was closed.\nSo I came home again.";
    assert!(!mostly_code(prose));
    assert!(!mostly_code("return x;"), "one line is too few to judge");
    let body = r#"{"model":"m","messages":[{"role":"user","content":"first: fn a() {}"},
        {"role":"assistant","content":"ok"},
        {"role":"user","content":[{"type":"text","text":"Tell me a story about a fox."}]}]}"#;
    assert_eq!(judged(Surface::Chat, body, Agent::Unknown), Task::Chat);
    let code_last = r#"{"model":"m","messages":[{"role":"user","content":"Tell me a story."},
        {"role":"user","content":[{"type":"text","text":"```\nSELECT 1;\n```"}]}]}"#;
    assert_eq!(judged(Surface::Chat, code_last, Agent::Unknown), Task::Code);
}
