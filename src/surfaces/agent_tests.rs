//! Agent detection on the headers real clients send.

use super::*;

fn agent(headers: &[(&str, &str)]) -> Agent {
    detect(&|name| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    })
}

/// What Claude Code sends: its own User-Agent over the Anthropic TypeScript SDK's headers.
const CLAUDE_CODE: &[(&str, &str)] = &[
    ("user-agent", "claude-cli/1.0.83 (external, cli)"),
    ("x-app", "cli"),
    ("anthropic-version", "2023-06-01"),
    ("anthropic-beta", "claude-code-20250219,oauth-2025-04-20"),
    ("x-stainless-lang", "js"),
    ("x-stainless-package-version", "0.55.1"),
    ("x-stainless-runtime", "node"),
];

#[test]
fn a_claude_cli_user_agent_is_claude_code_and_its_sdks_x_stainless_headers_do_not_override_it() {
    assert_eq!(agent(CLAUDE_CODE), Agent::ClaudeCode);
}

#[test]
fn codex_is_known_by_its_user_agent_or_its_originator_header() {
    let ua = "codex_cli_rs/0.58.0 (Mac OS 14.6.1; arm64) iTerm.app/3.5.10";
    assert_eq!(
        agent(&[("user-agent", ua), ("originator", "codex_cli_rs")]),
        Agent::Codex
    );
    assert_eq!(agent(&[("user-agent", "codex_exec/0.58.0")]), Agent::Codex);
    assert_eq!(agent(&[("originator", "codex_cli_rs")]), Agent::Codex);
}

#[test]
fn cline_is_known_by_its_user_agent_or_its_x_title() {
    assert_eq!(agent(&[("user-agent", "Cline/3.20.1")]), Agent::Cline);
    assert_eq!(
        agent(&[("x-title", "Cline"), ("user-agent", "OpenAI/JS 4.96.0")]),
        Agent::Cline
    );
}

#[test]
fn the_sdks_are_known_by_their_user_agent() {
    let cases = [
        ("OpenAI/Python 1.99.9", Agent::OpenaiPython),
        ("OpenAI/JS 5.12.0", Agent::OpenaiNode),
        ("Anthropic/Python 0.64.0", Agent::AnthropicPython),
        ("Anthropic/JS 0.60.0", Agent::AnthropicNode),
    ];
    for (ua, want) in cases {
        assert_eq!(agent(&[("user-agent", ua)]), want, "{ua}");
    }
}

#[test]
fn without_an_sdk_user_agent_x_stainless_lang_and_anthropic_version_name_the_sdk() {
    let py = ("x-stainless-lang", "python");
    let js = ("x-stainless-lang", "js");
    let version = ("anthropic-version", "2023-06-01");
    assert_eq!(agent(&[py]), Agent::OpenaiPython);
    assert_eq!(agent(&[js, ("user-agent", "my-app/2")]), Agent::OpenaiNode);
    assert_eq!(agent(&[py, version]), Agent::AnthropicPython);
    assert_eq!(agent(&[js, version]), Agent::AnthropicNode);
}

#[test]
fn anything_else_is_unknown() {
    assert_eq!(agent(&[]), Agent::Unknown);
    assert_eq!(agent(&[("user-agent", "curl/8.5.0")]), Agent::Unknown);
    assert_eq!(
        agent(&[("user-agent", "Mozilla/5.0 (Macintosh) Cursor/1.4")]),
        Agent::Unknown
    );
    assert_eq!(agent(&[("x-title", "Aider")]), Agent::Unknown);
}

#[test]
fn a_condition_accepts_exactly_the_agents_and_tasks_detection_yields() {
    use crate::config::condition::{AGENTS, TASKS};
    use crate::routing::facts::Task;
    let agents: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
    assert_eq!(agents, AGENTS);
    assert_eq!([Task::Code.as_str(), Task::Chat.as_str()], TASKS);
}
