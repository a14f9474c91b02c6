//! The mock speaking Anthropic's Messages API (`POST .../messages`), strict where the real one is:
//! `x-api-key`, `anthropic-version` and `max_tokens` are required, and fields the API does not
//! know (an OpenAI `reasoning_content` replayed in history, unsigned thinking) are refused.

use serde_json::{json, Value};

const TOP_LEVEL: &[&str] = &[
    "model",
    "messages",
    "max_tokens",
    "system",
    "stop_sequences",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "tools",
    "tool_choice",
    "metadata",
    "thinking",
    "service_tier",
];

fn error(status: u16, kind: &str, message: String) -> Option<(u16, String)> {
    Some((
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}}).to_string(),
    ))
}

/// The refusal the real API would give this request, if any.
pub fn refusal(headers: &[(String, String)], body: &Value) -> Option<(u16, String)> {
    let header = |n: &str| headers.iter().any(|(k, v)| k == n && !v.is_empty());
    if !header("x-api-key") {
        return error(
            401,
            "authentication_error",
            "x-api-key header is required".into(),
        );
    }
    if !header("anthropic-version") {
        return error(
            400,
            "invalid_request_error",
            "anthropic-version: header is required".into(),
        );
    }
    let Some(obj) = body.as_object() else {
        return error(
            400,
            "invalid_request_error",
            "body must be a JSON object".into(),
        );
    };
    if let Some(extra) = obj.keys().find(|k| !TOP_LEVEL.contains(&k.as_str())) {
        return error(
            400,
            "invalid_request_error",
            format!("{extra}: Extra inputs are not permitted"),
        );
    }
    if !obj.get("max_tokens").is_some_and(Value::is_u64) {
        return error(
            400,
            "invalid_request_error",
            "max_tokens: Field required".into(),
        );
    }
    for (i, m) in obj
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let m = m.as_object()?;
        if let Some(extra) = m.keys().find(|k| *k != "role" && *k != "content") {
            return error(
                400,
                "invalid_request_error",
                format!("messages.{i}.{extra}: Extra inputs are not permitted"),
            );
        }
        for b in m
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if b["type"] == "thinking" && !b.get("signature").is_some_and(Value::is_string) {
                return error(
                    400,
                    "invalid_request_error",
                    format!("messages.{i}: thinking block without signature"),
                );
            }
        }
    }
    None
}

pub fn message_body(model: &str, content: &str) -> String {
    json!({
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": content}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 5, "output_tokens": 7}
    })
    .to_string()
}

/// The named events of a Messages stream carrying `content`, word by word.
pub fn stream_events(model: &str, content: &str) -> Vec<String> {
    let mut ev = vec![
        format!(
            "event: message_start\ndata: {}\n\n",
            json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "usage": {"input_tokens": 5, "output_tokens": 1}}})
        ),
        format!(
            "event: content_block_start\ndata: {}\n\n",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        ),
        "event: ping\ndata: {\"type\": \"ping\"}\n\n".to_owned(),
    ];
    for word in content.split_inclusive(' ') {
        ev.push(format!("event: content_block_delta\ndata: {}\n\n", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}})));
    }
    ev.push(format!(
        "event: content_block_stop\ndata: {}\n\n",
        json!({"type": "content_block_stop", "index": 0})
    ));
    ev.push(format!("event: message_delta\ndata: {}\n\n", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 7}})));
    ev.push("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned());
    ev
}
