//! `params.agent`: which client sent a request, from its headers alone (the body is not read).
//!
//! In order, the first that applies decides:
//! 1. The User-Agent of a coding agent: `claude-cli/…` is `claude-code`, `codex_…/…` (Codex's
//!    `codex_cli_rs/`, `codex_exec/`) is `codex`, `Cline/…` is `cline`. Claude Code runs on
//!    Anthropic's TypeScript SDK and so also sends its `x-stainless-*` headers: those never
//!    override its User-Agent.
//! 2. The agents' own headers: `originator: codex_…` (Codex), `X-Title: Cline` (Cline).
//! 3. The SDKs' User-Agent: `OpenAI/Python`, `OpenAI/JS`, `Anthropic/Python`, `Anthropic/JS`.
//! 4. The SDKs' `x-stainless-lang` (`python`, or `js` for Node) when the User-Agent names no SDK
//!    (a caller may replace it): Anthropic's SDKs always send `anthropic-version`, OpenAI's never.
//! 5. Anything else is `unknown`. Cursor, Aider, Continue and LangChain send no signal of their
//!    own to a gateway (they appear as the SDK they run on, or as `unknown`).

use crate::routing::facts::Agent;

/// The headers detection reads (the edge reads only these where it has no header snapshot).
pub const SIGNAL_HEADERS: [&str; 5] = [
    "user-agent",
    "originator",
    "x-title",
    "x-stainless-lang",
    "anthropic-version",
];

fn starts_with(value: &str, prefix: &str) -> bool {
    value
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// The client that sent a request whose headers `header` reads (names in lower case).
pub fn detect<'h>(header: &dyn Fn(&str) -> Option<&'h str>) -> Agent {
    let user_agent = header("user-agent").map(str::trim).unwrap_or("");
    let by_user_agent = [
        ("claude-cli/", Agent::ClaudeCode),
        ("codex_", Agent::Codex),
        ("cline/", Agent::Cline),
    ];
    if let Some((_, agent)) = by_user_agent
        .iter()
        .find(|(prefix, _)| starts_with(user_agent, prefix))
    {
        return *agent;
    }
    if header("originator").is_some_and(|o| starts_with(o.trim(), "codex_")) {
        return Agent::Codex;
    }
    if header("x-title").is_some_and(|t| t.trim().eq_ignore_ascii_case("cline")) {
        return Agent::Cline;
    }
    let by_sdk = [
        ("openai/python", Agent::OpenaiPython),
        ("openai/js", Agent::OpenaiNode),
        ("anthropic/python", Agent::AnthropicPython),
        ("anthropic/js", Agent::AnthropicNode),
    ];
    if let Some((_, agent)) = by_sdk
        .iter()
        .find(|(prefix, _)| starts_with(user_agent, prefix))
    {
        return *agent;
    }
    let anthropic = header("anthropic-version").is_some();
    match header("x-stainless-lang").map(str::trim) {
        Some(l) if l.eq_ignore_ascii_case("python") && anthropic => Agent::AnthropicPython,
        Some(l) if l.eq_ignore_ascii_case("python") => Agent::OpenaiPython,
        Some(l) if l.eq_ignore_ascii_case("js") && anthropic => Agent::AnthropicNode,
        Some(l) if l.eq_ignore_ascii_case("js") => Agent::OpenaiNode,
        _ => Agent::Unknown,
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
