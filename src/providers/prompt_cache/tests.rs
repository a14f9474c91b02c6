use super::*;
use crate::config::CacheTtl;
use serde_json::json;

fn anthropic(body: &Value, ttl: CacheTtl, min: u64) -> Option<Value> {
    let out = anthropic::inject(body.to_string().as_bytes(), ttl, min)?;
    Some(serde_json::from_slice(&out).unwrap())
}

fn conversation() -> Value {
    json!({
        "model": "claude",
        "max_tokens": 10,
        "tools": [{"name": "a", "input_schema": {"type": "object"}},
                  {"name": "b", "input_schema": {"type": "object"}}],
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "third"}
        ]
    })
}

fn eph() -> Value {
    json!({"type": "ephemeral"})
}

#[test]
fn marks_land_on_the_last_tool_the_system_prompt_and_the_last_two_user_turns() {
    let out = anthropic(&conversation(), CacheTtl::FiveMinutes, 0).unwrap();
    assert_eq!(out["tools"][1]["cache_control"], eph());
    assert!(out["tools"][0].get("cache_control").is_none());
    assert_eq!(
        out["system"],
        json!([{"type": "text", "text": "You are terse.", "cache_control": eph()}])
    );
    assert_eq!(
        out["messages"][0]["content"], "first",
        "older turns stay as sent"
    );
    assert_eq!(out["messages"][2]["content"][0]["cache_control"], eph());
    assert_eq!(
        out["messages"][4]["content"],
        json!([{"type": "text", "text": "third", "cache_control": eph()}])
    );
    let count = out.to_string().matches("cache_control").count();
    assert_eq!(count, 4);
}

#[test]
fn a_string_user_content_that_gets_a_mark_becomes_one_text_block_and_nothing_else_changes() {
    let body = conversation();
    let sent = body.to_string();
    let out = anthropic::inject(sent.as_bytes(), CacheTtl::FiveMinutes, 0).unwrap();
    let out = String::from_utf8(out).unwrap();
    // Fields without a mark keep their text exactly.
    for unchanged in [r#""model":"claude""#, r#""max_tokens":10"#] {
        assert!(out.contains(unchanged), "{out}");
    }
    let mut v: Value = serde_json::from_str(&out).unwrap();
    // Taking the marks out again gives the body back, the string contents as one text block.
    let strip = |b: &mut Value| {
        b.as_object_mut().map(|o| o.remove("cache_control"));
    };
    v["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .for_each(strip);
    let system = v["system"].as_array_mut().unwrap();
    system.iter_mut().for_each(strip);
    for m in v["messages"].as_array_mut().unwrap() {
        if let Some(blocks) = m["content"].as_array_mut() {
            blocks.iter_mut().for_each(strip);
        }
    }
    let mut want = body;
    want["system"] = json!([{"type": "text", "text": "You are terse."}]);
    want["messages"][4]["content"] = json!([{"type": "text", "text": "third"}]);
    assert_eq!(v, want);
}

#[test]
fn never_more_than_four_marks_whatever_the_places() {
    let spots: Vec<Spot> = (0..7)
        .map(|i| Spot {
            place: Place::Message(i),
            prefix_tokens: 10_000 * (i as u64 + 1),
        })
        .collect();
    assert_eq!(choose(&spots, 1, Minimum::Prefix).len(), MAX_MARKS);
    assert_eq!(choose(&spots, 1, Minimum::SincePrevious).len(), MAX_MARKS);
    let mut body = conversation();
    for _ in 0..10 {
        let turns = body["messages"].as_array_mut().unwrap();
        turns.push(json!({"role": "assistant", "content": "ok"}));
        turns.push(json!({"role": "user", "content": "more"}));
    }
    let out = anthropic(&body, CacheTtl::FiveMinutes, 0).unwrap();
    assert_eq!(out.to_string().matches("cache_control").count(), 4);
}

#[test]
fn no_mark_goes_where_the_estimated_prefix_is_below_the_models_minimum() {
    let mut body = conversation();
    // ~2,000 tokens of text in the second user turn: only the turns from there on reach 1,024.
    body["messages"][2]["content"][0]["text"] = json!("x".repeat(8_000));
    let out = anthropic(&body, CacheTtl::FiveMinutes, 1_024).unwrap();
    assert!(out["tools"][1].get("cache_control").is_none());
    assert_eq!(
        out["system"], "You are terse.",
        "a short system prompt stays a string"
    );
    assert_eq!(out["messages"][2]["content"][0]["cache_control"], eph());
    assert_eq!(out["messages"][4]["content"][0]["cache_control"], eph());
    assert_eq!(
        anthropic(&conversation(), CacheTtl::FiveMinutes, 1_024),
        None,
        "nothing reaches the minimum: the body is sent as built"
    );
    let short = conversation().to_string().into_bytes();
    assert_eq!(
        inject(
            Dialect::Anthropic,
            &model("claude-x", 4_096),
            CacheTtl::OneHour,
            short.clone()
        ),
        short
    );
}

#[test]
fn ttl_1h_marks_every_injected_block_with_the_hour_and_merges_the_beta_once() {
    let out = anthropic(&conversation(), CacheTtl::OneHour, 0).unwrap();
    let hour = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(out["tools"][1]["cache_control"], hour);
    assert_eq!(out["system"][0]["cache_control"], hour);
    assert_eq!(out["messages"][4]["content"][0]["cache_control"], hour);
    assert_eq!(merged_beta(None), EXTENDED_TTL_BETA);
    assert_eq!(
        merged_beta(Some("files-api-2025-04-14")),
        format!("files-api-2025-04-14,{EXTENDED_TTL_BETA}")
    );
    let both = format!("a, {EXTENDED_TTL_BETA}");
    assert_eq!(merged_beta(Some(&both)), both, "no duplicate");
}

#[test]
fn a_request_that_marks_anything_of_its_own_is_recognised_on_either_surface() {
    let marked = |body: Value| {
        let fields: Vec<(String, String)> = body
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        carries_marks(fields.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    };
    assert!(!marked(conversation()));
    let cc = eph();
    let mut b = conversation();
    b["cache_control"] = cc.clone();
    assert!(marked(b), "top-level");
    let mut b = conversation();
    b["tools"][0]["cache_control"] = cc.clone();
    assert!(marked(b), "a tool");
    let mut b = conversation();
    b["system"] = json!([{"type": "text", "text": "s", "cache_control": cc}]);
    assert!(marked(b), "a system block");
    let mut b = conversation();
    b["messages"][2]["content"][0]["cache_control"] = cc.clone();
    assert!(marked(b), "a content block");
    let mut b = conversation();
    b["messages"][0]["content"] = json!([{"type": "tool_result", "tool_use_id": "t",
        "content": [{"type": "text", "text": "r", "cache_control": cc}]}]);
    assert!(marked(b), "inside a tool result");
    let chat = json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "hi", "cache_control": cc}]}]});
    assert!(marked(chat), "a chat content part");
    let chat_tool = json!({"model": "m", "messages": [], "tools": [{"type": "function",
        "function": {"name": "f"}, "cache_control": cc}]});
    assert!(marked(chat_tool), "a chat tool");
    let talk = json!({"model": "m", "messages": [{"role": "user",
        "content": "what does \"cache_control\" do? cache_control"}]});
    assert!(!marked(talk), "the word in text is not a mark");
}

fn model(upstream: &str, min: u32) -> crate::config::CatalogModel {
    let body = format!(
        r#"{{"provider":"p","upstream_model":"{upstream}","context_window":200000,"min_cache_tokens":{min}}}"#
    );
    crate::config::admin_body::parse_body::<crate::config::admin_body::ModelBody>(body.as_bytes())
        .unwrap()
        .validate(crate::config::ModelId::parse("m").unwrap())
        .unwrap()
}

fn converse() -> Value {
    json!({
        "messages": [
            {"role": "user", "content": [{"text": "first"}]},
            {"role": "assistant", "content": [{"text": "ok"}]},
            {"role": "user", "content": [{"text": "second"}]}
        ],
        "system": [{"text": "You are terse."}],
        "inferenceConfig": {"maxTokens": 10},
        "toolConfig": {"tools": [{"toolSpec": {"name": "a"}}], "toolChoice": {"auto": {}}}
    })
}

fn bedrock(body: &Value, upstream: &str, ttl: CacheTtl, min: u32) -> Value {
    let out = inject(
        Dialect::Bedrock,
        &model(upstream, min),
        ttl,
        body.to_string().into_bytes(),
    );
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn bedrock_cache_points_are_blocks_appended_after_the_tools_the_system_and_the_last_two_user_turns()
{
    let out = bedrock(
        &converse(),
        "anthropic.claude-sonnet-4",
        CacheTtl::FiveMinutes,
        0,
    );
    let point = json!({"cachePoint": {"type": "default"}});
    assert_eq!(out["toolConfig"]["tools"][1], point);
    assert_eq!(out["toolConfig"]["toolChoice"], json!({"auto": {}}));
    assert_eq!(out["system"][1], point);
    assert_eq!(out["messages"][0]["content"][1], point);
    assert_eq!(out["messages"][1]["content"].as_array().unwrap().len(), 1);
    assert_eq!(out["messages"][2]["content"][1], point);
    assert_eq!(out["inferenceConfig"], json!({"maxTokens": 10}));
}

#[test]
fn bedrock_ttls_never_increase_and_each_checkpoint_holds_the_minimum_beyond_the_previous() {
    let out = bedrock(
        &converse(),
        "us.anthropic.claude-haiku-4-5",
        CacheTtl::OneHour,
        0,
    );
    let text = out.to_string();
    let ttls: Vec<&str> = text
        .match_indices("cachePoint")
        .map(|(i, _)| {
            if text[i..].starts_with(r#"cachePoint":{"ttl":"1h""#) {
                "1h"
            } else {
                "5m"
            }
        })
        .collect();
    assert_eq!(
        ttls, ["1h"; 4],
        "one TTL for every checkpoint: never increasing"
    );
    // Tools and system hold far less than 1,024 tokens; the first turn's prefix reaches it, and
    // the second turn holds ~1,200 more beyond it.
    let mut body = converse();
    body["messages"][0]["content"][0]["text"] = json!("x".repeat(4_400));
    body["messages"][2]["content"][0]["text"] = json!("y".repeat(4_800));
    let out = bedrock(
        &body,
        "anthropic.claude-3-7-sonnet",
        CacheTtl::FiveMinutes,
        1_024,
    );
    assert_eq!(out["toolConfig"]["tools"].as_array().unwrap().len(), 1);
    assert_eq!(out["system"].as_array().unwrap().len(), 1);
    assert_eq!(out["messages"][0]["content"].as_array().unwrap().len(), 2);
    assert_eq!(out["messages"][2]["content"].as_array().unwrap().len(), 2);
    let spots = [1_000, 1_500, 2_100].map(|t| Spot {
        place: Place::LastTool,
        prefix_tokens: t,
    });
    assert_eq!(choose(&spots, 1_000, Minimum::SincePrevious).len(), 2);
    assert_eq!(choose(&spots, 1_000, Minimum::Prefix).len(), 3);
}

#[test]
fn only_claude_models_on_bedrock_get_checkpoints() {
    assert!(bedrock::is_claude("anthropic.claude-3-haiku-20240307-v1:0"));
    assert!(bedrock::is_claude("eu.anthropic.claude-sonnet-4-5"));
    assert!(!bedrock::is_claude("amazon.nova-pro-v1:0"));
    let sent = converse().to_string().into_bytes();
    for (dialect, upstream) in [
        (Dialect::Bedrock, "amazon.nova-pro-v1:0"),
        (Dialect::Openai, "gpt"),
    ] {
        let out = inject(
            dialect,
            &model(upstream, 0),
            CacheTtl::FiveMinutes,
            sent.clone(),
        );
        assert_eq!(out, sent, "{upstream}");
    }
}
