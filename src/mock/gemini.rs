//! The mock speaking Google's Gemini API (`POST …/models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`), strict where the real one is: the key in `x-goog-api-key`,
//! `alt=sse` on a stream (without it Gemini streams a JSON array), roles `user` and `model` only,
//! a `functionResponse.response` that is an object, tool schemas in `parametersJsonSchema` (the
//! older `parameters` refuses `$schema`), and no `generationConfig` field Gemini does not know.
//! Streams are SSE with CRLF line endings and no `[DONE]`.

use serde_json::{json, Value};

const GENERATION_CONFIG: &[&str] = &[
    "maxOutputTokens",
    "temperature",
    "topP",
    "topK",
    "stopSequences",
    "candidateCount",
    "seed",
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "thinkingConfig",
    "presencePenalty",
    "frequencyPenalty",
];

/// The model a path names, when it is a Gemini path; and whether it streams.
pub fn route(path: &str) -> Option<(&str, bool)> {
    let (route, _) = path.split_once('?').unwrap_or((path, ""));
    let (head, method) = route.rsplit_once(':')?;
    let model = head.rsplit_once("/models/")?.1;
    match method {
        "generateContent" => Some((model, false)),
        "streamGenerateContent" => Some((model, true)),
        _ => None,
    }
}

fn error(status: u16, kind: &str, message: &str, reason: Option<&str>) -> Option<(u16, String)> {
    let details = reason.map_or_else(Vec::new, |r| {
        vec![json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": r})]
    });
    Some((
        status,
        json!({"error": {"code": status, "message": message, "status": kind, "details": details}})
            .to_string(),
    ))
}

/// The model of a `batchEmbedContents` path.
pub fn embed_route(path: &str) -> Option<&str> {
    let (head, method) = path.split('?').next()?.rsplit_once(':')?;
    let model = head.rsplit_once("/models/")?.1;
    (method == "batchEmbedContents").then_some(model)
}

/// The real API's answer to a batch: an embedding per request, in order (`outputDimensionality`
/// values each, 8 by default), or its 400 when a request names another model or holds no text.
pub fn embed_answer(model: &str, headers: &[(String, String)], body: &Value) -> (u16, String) {
    let refused = key_refusal(headers).or_else(|| {
        let bad = |m: &str| error(400, "INVALID_ARGUMENT", m, None);
        let requests = body.get("requests").and_then(Value::as_array);
        let Some(requests) = requests.filter(|r| !r.is_empty()) else {
            return bad("* BatchEmbedContentsRequest.requests: requests is not specified");
        };
        let named = format!("models/{model}");
        requests.iter().enumerate().find_map(|(i, r)| {
            let text = r.pointer("/content/parts/0/text").and_then(Value::as_str);
            match (r.get("model").and_then(Value::as_str), text) {
                (Some(m), Some(_)) if m == named => None,
                (Some(m), Some(_)) => bad(&format!(
                    "requests[{i}].model: {m} does not match the request's model {named}"
                )),
                _ => bad(&format!(
                    "requests[{i}]: a model and a text part are required"
                )),
            }
        })
    });
    if let Some(refused) = refused {
        return refused;
    }
    let requests = body.get("requests").and_then(Value::as_array);
    let embeddings: Vec<Value> = requests
        .into_iter()
        .flatten()
        .map(|r| {
            let n = r.get("outputDimensionality").and_then(Value::as_u64);
            json!({"values": vec![0.125; n.unwrap_or(8) as usize]})
        })
        .collect();
    (200, json!({ "embeddings": embeddings }).to_string())
}

/// The refusal of a call without a usable `x-goog-api-key`, if any.
fn key_refusal(headers: &[(String, String)]) -> Option<(u16, String)> {
    let key = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("x-goog-api-key"))
        .map(|(_, v)| v.as_str());
    match key {
        None | Some("") => error(
            403,
            "PERMISSION_DENIED",
            "Method doesn't allow unregistered callers.",
            None,
        ),
        Some(k) if k.starts_with("bad") => error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid.",
            Some("API_KEY_INVALID"),
        ),
        Some(_) => None,
    }
}

/// The refusal the real API would give this call, if any.
pub fn refusal(path: &str, headers: &[(String, String)], body: &Value) -> Option<(u16, String)> {
    if let Some(refused) = key_refusal(headers) {
        return Some(refused);
    }
    let bad = |m: &str| error(400, "INVALID_ARGUMENT", m, None);
    if route(path).is_some_and(|(_, s)| s) && !path.contains("alt=sse") {
        return bad("this mock streams SSE only: alt=sse is required");
    }
    let Some(contents) = body.get("contents").and_then(Value::as_array) else {
        return bad("* GenerateContentRequest.contents: contents is not specified");
    };
    for (i, c) in contents.iter().enumerate() {
        let role = c.get("role").and_then(Value::as_str).unwrap_or("user");
        if role != "user" && role != "model" {
            return bad(&format!(
                "contents[{i}].role: Please use a valid role: user, model."
            ));
        }
        for part in c
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let response = part.pointer("/functionResponse/response");
            if response.is_some_and(|r| !r.is_object()) {
                return bad("functionResponse.response must be a JSON object");
            }
        }
    }
    for decl in body
        .pointer("/tools/0/functionDeclarations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if decl.pointer("/parameters/$schema").is_some() {
            return bad("Invalid JSON payload received. Unknown name \"$schema\" at 'tools[0].function_declarations[0].parameters'");
        }
    }
    let config = body.get("generationConfig").and_then(Value::as_object);
    if let Some(k) = config
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .find(|k| !GENERATION_CONFIG.contains(&k.as_str()))
    {
        return bad(&format!(
            "Invalid JSON payload received. Unknown name \"{k}\" at 'generation_config'"
        ));
    }
    None
}

fn usage() -> Value {
    json!({"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12})
}

/// The default answer, non-streamed.
pub fn answer_body(model: &str, content: &str) -> String {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": content}]},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage(), "modelVersion": model, "responseId": "mock-response"})
    .to_string()
}

/// The default answer as SSE events (CRLF endings, no `[DONE]`): one per word, the last with
/// the finish reason and the usage.
pub fn stream_events(model: &str, content: &str) -> Vec<String> {
    let words: Vec<&str> = content.split_inclusive(' ').collect();
    let last = words.len().saturating_sub(1);
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut v = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": w}]},
                "index": 0}], "modelVersion": model, "responseId": "mock-response"});
            if i == last {
                v["candidates"][0]["finishReason"] = "STOP".into();
                v["usageMetadata"] = usage();
            }
            format!("data: {v}\r\n\r\n")
        })
        .collect()
}
