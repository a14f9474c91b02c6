//! A `GenerateContentResponse`'s first candidate read as chat pieces, the same way for a whole
//! answer and for each event of a stream. Only the first candidate is read: requests never ask
//! for more (`candidateCount` is not sent).

use super::tool_id;
use serde_json::{json, Value};

/// What one part of the candidate's content is to a chat answer.
pub(super) enum Piece<'a> {
    Text(&'a str),
    /// A part marked `thought: true`: reasoning, shown as `reasoning_content`.
    Thought(&'a str),
    /// A whole function call as an OpenAI tool call (`id`, `type`, `function`).
    Call(Value),
    /// Parts with no chat equivalent (inline data, executable code, a bare signature).
    Other,
}

/// The first candidate, if the answer has one.
pub(super) fn candidate(answer: &Value) -> Option<&Value> {
    answer.get("candidates")?.as_array()?.first()
}

/// The candidate's parts (none when it has no content, as when a filter stopped it).
pub(super) fn parts(candidate: Option<&Value>) -> &[Value] {
    candidate
        .and_then(|c| c.get("content"))
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `finishReason` of the candidate, or of the prompt when a filter blocked it before any
/// candidate (`promptFeedback.blockReason`, read as a refusal).
pub(super) fn finish(answer: &Value) -> Option<&str> {
    let reason = candidate(answer)
        .and_then(|c| c.get("finishReason"))
        .and_then(Value::as_str);
    reason.or_else(|| block_reason(answer).map(|_| "PROHIBITED_CONTENT"))
}

/// `promptFeedback.blockReason`, when the prompt itself was blocked.
pub(super) fn block_reason(answer: &Value) -> Option<&str> {
    answer
        .get("promptFeedback")?
        .get("blockReason")?
        .as_str()
        .filter(|r| !r.is_empty() && *r != "BLOCKED_REASON_UNSPECIFIED")
}

/// One part as a piece; `call_index` numbers the answer's tool calls and `response_id` keeps
/// their ids apart from another answer's.
pub(super) fn piece<'a>(part: &'a Value, response_id: &str, call_index: usize) -> Piece<'a> {
    if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
        let id = tool_id::call_id(
            call.get("id").and_then(Value::as_str),
            response_id,
            call_index,
            part.get("thoughtSignature").and_then(Value::as_str),
        );
        let arguments = call
            .get("args")
            .filter(|a| a.is_object())
            .map_or_else(|| "{}".to_owned(), Value::to_string);
        return Piece::Call(json!({
            "id": id,
            "type": "function",
            "function": {"name": call.get("name").and_then(Value::as_str).unwrap_or(""), "arguments": arguments},
        }));
    }
    match part.get("text").and_then(Value::as_str) {
        Some(text) if part.get("thought") == Some(&Value::Bool(true)) => Piece::Thought(text),
        Some(text) => Piece::Text(text),
        None => Piece::Other,
    }
}
