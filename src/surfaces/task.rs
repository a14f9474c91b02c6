//! `params.task`: whether a request is coding work (`code`) or anything else (`chat`).
//!
//! It is `code` when any of these holds, tried cheapest first:
//! - the client is a coding agent (`surfaces::agent`: Claude Code, Codex, Cline);
//! - the request declares a coding tool, its name matched case-insensitively: `bash`, `shell`,
//!   `edit`, `multiedit`, `write`, `read`, `glob`, `grep`, `apply_patch`, `str_replace_editor`,
//!   `str_replace_based_edit_tool`, `notebookedit`;
//! - the last user turn is mostly code: it holds a fenced block (```` ``` ````), or at least
//!   `MIN_LINES` of its first `MAX_LINES` non-blank lines are and `CODE_SHARE` of them look like
//!   code (`code_like`).
//!
//! It reads the chat view every surface has (`Inbound::chat`), so a Messages or Responses
//! request is judged as its chat-completions form, and it runs only when a condition reads
//! `params.task`.

use crate::api::ChatRequest;
use crate::routing::facts::{Agent, Task};
use serde_json::value::RawValue;
use serde_json::Value;

/// Tool names that mark coding work (compared case-insensitively).
pub const CODING_TOOLS: [&str; 12] = [
    "bash",
    "shell",
    "edit",
    "multiedit",
    "write",
    "read",
    "glob",
    "grep",
    "apply_patch",
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "notebookedit",
];

/// Lines of the last user turn looked at: a pasted file is judged by its head.
pub const MAX_LINES: usize = 200;
/// The fewest non-blank lines a turn must have to be judged by its share of code-like lines.
pub const MIN_LINES: usize = 3;
/// The share of code-like lines that makes a turn mostly code.
pub const CODE_SHARE: f64 = 0.6;

/// The request's task, for a client `agent`.
pub fn task(chat: &ChatRequest, agent: Agent) -> Task {
    let code = agent.codes()
        || chat.raw("tools").is_some_and(declares_coding_tool)
        || chat
            .raw("messages")
            .and_then(last_user_text)
            .is_some_and(|t| mostly_code(&t));
    if code {
        Task::Code
    } else {
        Task::Chat
    }
}

/// `tools` (the chat view's `{"type":"function","function":{"name":…}}`, or a bare `name`)
/// names a coding tool. Read as a `Value`, whose reader the module has anyway.
pub fn declares_coding_tool(tools: &str) -> bool {
    let Ok(Value::Array(tools)) = serde_json::from_str::<Value>(tools) else {
        return false;
    };
    tools.iter().any(|t| {
        let name = t["function"]["name"].as_str().or(t["name"].as_str());
        name.is_some_and(|n| CODING_TOOLS.iter().any(|c| n.eq_ignore_ascii_case(c)))
    })
}

/// The text of the last `user` message: its string content, or its text parts joined by lines.
/// The turns are split as raw text, and only those from the end back to the last user turn are
/// parsed.
pub fn last_user_text(messages: &str) -> Option<String> {
    let turns = serde_json::from_str::<Vec<&RawValue>>(messages).ok()?;
    let user = turns.iter().rev().find_map(|t| {
        let turn = serde_json::from_str::<Value>(t.get()).ok()?;
        (turn["role"] == "user").then_some(turn)
    })?;
    match &user["content"] {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
            Some(texts.join("\n"))
        }
        _ => None,
    }
}

/// A fenced block, or enough code-like lines (`code_like`).
pub fn mostly_code(text: &str) -> bool {
    if text.contains("```") {
        return true;
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(MAX_LINES)
        .collect();
    let code = lines.iter().filter(|l| code_like(l)).count();
    lines.len() >= MIN_LINES && code as f64 >= CODE_SHARE * lines.len() as f64
}

/// Starts like a statement, a declaration or a comment of a common language, ends like a
/// statement or block, or holds an operator prose seldom has.
pub fn code_like(line: &str) -> bool {
    const STARTS: [&str; 24] = [
        "def ",
        "fn ",
        "pub ",
        "function ",
        "class ",
        "import ",
        "from ",
        "#include",
        "return ",
        "let ",
        "const ",
        "var ",
        "if (",
        "for (",
        "while (",
        "package ",
        "using ",
        "select ",
        "#!",
        "//",
        "/*",
        "</",
        "@",
        "$ ",
    ];
    const ENDS: [&str; 5] = [";", "{", "}", "};", "})"];
    const HOLDS: [&str; 6] = ["=>", "->", "::", "();", "!=", "=="];
    let lower = line.to_ascii_lowercase();
    STARTS.iter().any(|s| lower.starts_with(s))
        || ENDS.iter().any(|e| line.ends_with(e))
        || HOLDS.iter().any(|h| line.contains(h))
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
