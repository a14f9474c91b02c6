//! The context-window guard: a candidate whose `context_window` cannot hold the prompt
//! plus the requested output is skipped before it is called, and with
//! `X-CogniGate-Truncate: oldest` the oldest turns are dropped until it fits instead.
//!
//! The estimate, documented in docs/routing-by-request.md: tokens = ceil(bytes of the `messages` JSON text / 4)
//! plus the requested output (`max_completion_tokens`, else `max_tokens`, else 0). Four bytes a
//! token is the usual rule of thumb for English text under the GPT and Claude tokenizers; JSON
//! punctuation makes it err on the large side. No tokenizer is shipped: it would not fit the
//! Worker's size budget, and no one tokenizer is right for every provider in a chain.
//!
//! The body is never parsed into a tree: each message is read only for its `role` and whether it
//! has `tool_calls`, and a truncated body differs from the caller's only in `messages`.

use crate::api::chat::DEFAULT_MAX_JSON_VALUES;
use crate::api::ChatRequest;
use crate::usage::estimate::{estimate_tokens, requested_output};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

/// How one request fits one candidate's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    Fits,
    /// Fits once this many of the oldest non-system messages are dropped (truncation asked for).
    Truncated {
        dropped: usize,
    },
    /// Does not fit, or truncation was not asked for or cannot make it fit.
    TooLarge,
}

pub fn fit(req: &ChatRequest, window: u32, truncate: bool) -> Fit {
    let messages = req.raw("messages").unwrap_or("[]");
    let output = requested_output(req);
    if estimate_tokens(messages.len(), output) <= u64::from(window) {
        return Fit::Fits;
    }
    if !truncate {
        return Fit::TooLarge;
    }
    match truncate_oldest(messages, window, output) {
        Some((_, dropped)) => Fit::Truncated { dropped },
        None => Fit::TooLarge,
    }
}

/// The request as sent to a candidate it fits only truncated: every field as the caller sent
/// it but `messages`, which loses its oldest turns. `None` when no truncation applies.
pub fn fitted_request(req: &ChatRequest, window: u32) -> Option<ChatRequest> {
    let messages = req.raw("messages")?;
    let (kept, _) = truncate_oldest(messages, window, requested_output(req))?;
    let mut body = String::with_capacity(req.raw("messages").map_or(0, str::len) + 64);
    body.push('{');
    for (i, (name, raw)) in req.fields().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&serde_json::to_string(name).ok()?);
        body.push(':');
        body.push_str(if name == "messages" { &kept } else { raw });
    }
    body.push('}');
    ChatRequest::parse_bounded(body.into_bytes(), DEFAULT_MAX_JSON_VALUES).ok()
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    role: String,
    #[serde(default)]
    tool_calls: Option<IgnoredAny>,
}

/// Drops the oldest non-system turns until the estimate fits `window`: an assistant message with
/// `tool_calls` goes together with the `tool` results that follow it, system (and developer)
/// messages always stay, and so does the newest turn; assistant turns left at the front after
/// that go too, so the kept conversation starts with a user message. The kept `messages` JSON text and how many
/// messages were dropped; `None` if nothing needs dropping or nothing droppable makes it fit.
pub fn truncate_oldest(messages: &str, window: u32, output: u64) -> Option<(String, usize)> {
    let items: Vec<&RawValue> = serde_json::from_str(messages).ok()?;
    let heads: Vec<Head> = items
        .iter()
        .map(|m| serde_json::from_str(m.get()).ok())
        .collect::<Option<_>>()?;
    let stays = |h: &Head| h.role == "system" || h.role == "developer";
    // Turns: (first index, one past the last) of each droppable unit, oldest first. Together
    // they are every message but the system (and developer) ones.
    let mut turns: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < heads.len() {
        if stays(&heads[i]) {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        if heads[i].role == "assistant" && heads[i].tool_calls.is_some() {
            while end < heads.len() && heads[end].role == "tool" {
                end += 1;
            }
        }
        turns.push((i, end));
        i = end;
    }
    // The kept array's JSON text size, kept up to date as turns go: each message is counted
    // once, so truncation is linear in the number of messages.
    let mut kept_bytes: usize = items.iter().map(|m| m.get().len()).sum();
    let mut kept_count = items.len();
    let size = |bytes: usize, count: usize| 2 + bytes + count.saturating_sub(1);
    let fits = |bytes: usize| estimate_tokens(bytes, output) <= u64::from(window);
    // Turns go oldest first, so what goes is every message before `cut` but the system ones.
    let mut cut = 0;
    // The newest turn is the question being asked: it is never dropped. Once truncating, the
    // kept conversation also starts at a user message (Anthropic's Messages API requires it).
    for &(start, end) in turns.iter().take(turns.len().saturating_sub(1)) {
        if fits(size(kept_bytes, kept_count)) && (cut == 0 || heads[start].role == "user") {
            break;
        }
        kept_bytes = items[start..end]
            .iter()
            .fold(kept_bytes, |b, m| b.saturating_sub(m.get().len()));
        kept_count = kept_count.saturating_sub(end - start);
        cut = end;
    }
    if cut == 0 || !fits(size(kept_bytes, kept_count)) {
        return None;
    }
    let kept: Vec<&str> = items
        .iter()
        .zip(&heads)
        .enumerate()
        .filter(|(i, (_, h))| *i >= cut || stays(h))
        .map(|(_, (m, _))| m.get())
        .collect();
    Some((format!("[{}]", kept.join(",")), items.len() - kept_count))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: &str, text: &str) -> String {
        format!(r#"{{"role":"{role}","content":"{text}"}}"#)
    }

    fn chat(messages: &[String], extra: &str) -> ChatRequest {
        let body = format!(
            r#"{{"model":"m",{extra}"messages":[{}]}}"#,
            messages.join(",")
        );
        ChatRequest::parse(body.as_bytes()).unwrap()
    }

    #[test]
    fn the_estimate_is_a_quarter_of_the_message_bytes_rounded_up_plus_the_requested_output() {
        assert_eq!(estimate_tokens(0, 0), 0);
        assert_eq!(estimate_tokens(5, 0), 2);
        let req = chat(&[msg("user", "hi")], r#""max_tokens":50,"#);
        assert_eq!(requested_output(&req), 50);
        let req = chat(
            &[msg("user", "hi")],
            r#""max_tokens":50,"max_completion_tokens":70,"#,
        );
        assert_eq!(requested_output(&req), 70);
        assert_eq!(requested_output(&chat(&[], "")), 0);
    }

    #[test]
    fn a_200k_token_prompt_does_not_fit_a_32k_window_and_a_200k_window_holds_it() {
        let big = "x".repeat(800_000);
        let req = chat(&[msg("user", &big)], "");
        assert_eq!(fit(&req, 32_000, false), Fit::TooLarge);
        assert_eq!(fit(&req, 250_000, false), Fit::Fits);
        assert_eq!(
            fit(&req, 32_000, true),
            Fit::TooLarge,
            "the newest turn stays"
        );
    }

    fn roles(req: &ChatRequest) -> Vec<String> {
        let kept: Vec<serde_json::Value> =
            serde_json::from_str(req.raw("messages").unwrap()).unwrap();
        kept.iter()
            .map(|m| m["role"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn truncation_drops_the_oldest_turns_keeps_system_and_keeps_tool_pairs_together() {
        let big = "x".repeat(4_000);
        let call = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}"#;
        let result = r#"{"role":"tool","tool_call_id":"c1","content":"42"}"#;
        let messages = [
            msg("system", "be brief"),
            msg("user", &big),
            msg("user", "use the tool"),
            call.to_owned(),
            result.to_owned(),
            msg("assistant", "ok"),
            msg("user", "and now?"),
        ];
        let req = chat(&messages, "");
        // ~1_090 tokens in all; 1_000 needs only the big turn gone.
        assert_eq!(fit(&req, 1_000, true), Fit::Truncated { dropped: 1 });
        let fitted = fitted_request(&req, 1_000).unwrap();
        assert_eq!(
            roles(&fitted),
            ["system", "user", "assistant", "tool", "assistant", "user"]
        );
        assert_eq!(fitted.model, "m");
        // 40 tokens also needs "use the tool" gone, then the call goes with its result, and
        // the assistant turn left at the front goes too.
        assert_eq!(fit(&req, 40, true), Fit::Truncated { dropped: 5 });
        assert_eq!(
            roles(&fitted_request(&req, 40).unwrap()),
            ["system", "user"]
        );
    }

    #[test]
    fn a_tool_result_is_never_kept_without_its_call() {
        let call = r#"{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}"#;
        let result = format!(
            r#"{{"role":"tool","tool_call_id":"c1","content":"{}"}}"#,
            "r".repeat(2_000)
        );
        let req = chat(
            &[msg("user", "go"), call.to_owned(), result, msg("user", "q")],
            "",
        );
        let kept = roles(&fitted_request(&req, 100).unwrap());
        assert_eq!(kept, ["user"], "the call and its result went together");
    }

    #[test]
    fn a_request_that_fits_is_not_rebuilt() {
        let req = chat(&[msg("user", "hi")], r#""temperature":0.5,"#);
        assert_eq!(fit(&req, 100, true), Fit::Fits);
        assert!(fitted_request(&req, 100).is_none());
    }

    #[test]
    fn every_other_field_survives_truncation_unchanged() {
        let big = "y".repeat(4_000);
        let req = chat(
            &[msg("user", &big), msg("user", "q")],
            r#""temperature":0.5,"stream":true,"max_tokens":10,"#,
        );
        let fitted = fitted_request(&req, 100).unwrap();
        assert_eq!(fitted.raw("temperature"), Some("0.5"));
        assert!(fitted.stream);
        assert_eq!(fitted.raw("max_tokens"), Some("10"));
    }

    /// The rule stated once more, naively: drop the first `k` turns for the smallest `k` at which
    /// the kept text fits and starts at a user turn, measuring the kept text itself each time.
    fn reference(messages: &[String], window: u32) -> Option<usize> {
        let role = |m: &String| {
            serde_json::from_str::<serde_json::Value>(m).unwrap()["role"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        let mut turns: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < messages.len() {
            let r = role(&messages[i]);
            if r == "system" {
                i += 1;
                continue;
            }
            let mut end = i + 1;
            if messages[i].contains("tool_calls") {
                while end < messages.len() && role(&messages[end]) == "tool" {
                    end += 1;
                }
            }
            turns.push((i, end));
            i = end;
        }
        let fits_after = |k: usize| {
            let gone: Vec<usize> = turns[..k].iter().flat_map(|&(s, e)| s..e).collect();
            let kept: Vec<&str> = (0..messages.len())
                .filter(|i| !gone.contains(i))
                .map(|i| messages[i].as_str())
                .collect();
            (estimate_tokens(format!("[{}]", kept.join(",")).len(), 0) <= u64::from(window))
                .then_some(gone.len())
        };
        let last = turns.len().saturating_sub(1);
        let k = (0..last)
            .find(|&k| fits_after(k).is_some() && (k == 0 || role(&messages[turns[k].0]) == "user"))
            .unwrap_or(last);
        fits_after(k).filter(|dropped| *dropped > 0)
    }

    #[test]
    fn the_linear_truncation_drops_exactly_what_the_rule_says_for_every_window() {
        let call = |n: usize| {
            format!(
                r#"{{"role":"assistant","tool_calls":[{{"id":"c{n}","type":"function","function":{{"name":"f","arguments":"{{}}"}}}}]}}"#
            )
        };
        let result =
            |n: usize| format!(r#"{{"role":"tool","tool_call_id":"c{n}","content":"r{n}"}}"#);
        let mut messages = vec![msg("system", "sys")];
        for n in 0..12 {
            messages.push(msg("user", &"u".repeat(n * 7 + 1)));
            if n % 3 == 1 {
                messages.push(call(n));
                messages.push(result(n));
                messages.push(result(n + 100));
            }
            messages.push(msg("assistant", &"a".repeat(n * 5 + 2)));
            if n == 6 {
                messages.push(msg("system", "mid"));
            }
        }
        messages.push(msg("user", "q"));
        let all = format!("[{}]", messages.join(","));
        for window in 1..=estimate_tokens(all.len(), 0) as u32 + 1 {
            let got = truncate_oldest(&all, window, 0).map(|(_, d)| d);
            assert_eq!(got, reference(&messages, window), "window {window}");
        }
    }
}
