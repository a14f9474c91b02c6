//! Upstream answers several end-to-end files script the mock with.

use cognigate::mock::Reply;
use serde_json::json;

/// OpenAI's safety refusal: `finish_reason: "content_filter"`, no content, 5 prompt tokens billed.
pub fn content_filter() -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-filtered", "object": "chat.completion", "created": 1_700_000_000,
            "model": "m1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null},
                "finish_reason": "content_filter"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}})
        .to_string(),
    )
}
