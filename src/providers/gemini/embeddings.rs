//! OpenAI embeddings ↔ Gemini `batchEmbedContents`: one request per input, answered in order.
//! Gemini reports no tokens for embeddings, so the answer's usage is unknown (`None`) and the
//! gateway estimates it; the `usage` written for the caller holds that estimate's place as 0.

use super::{bare_model, model_segment};
use crate::usage::TokenCounts;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// Gemini takes at most this many requests in one batch; a longer input is refused here, as the
/// caller's own error, rather than upstream with a 400.
pub const MAX_INPUTS: usize = 100;

/// `models/{m}:batchEmbedContents`.
pub fn path(upstream_model: &str) -> String {
    format!(
        "models/{}:batchEmbedContents",
        model_segment(upstream_model)
    )
}

/// The batch for an OpenAI `input` (`texts`).
pub fn body(
    upstream_model: &str,
    input: &Value,
    dimensions: Option<u64>,
) -> Result<Vec<u8>, String> {
    let model = format!("models/{}", bare_model(upstream_model));
    let requests: Vec<Value> = texts(input)?
        .into_iter()
        .map(|text| {
            let mut r = json!({"model": model, "content": {"parts": [{"text": text}]}});
            if let Some(d) = dimensions {
                r["outputDimensionality"] = d.into();
            }
            r
        })
        .collect();
    serde_json::to_vec(&json!({ "requests": requests })).map_err(|e| e.to_string())
}

/// The texts of an OpenAI `input`: a string or an array of at most `MAX_INPUTS` strings. Token
/// arrays (OpenAI's pre-tokenized input) have no Gemini equivalent: `Err` says why.
pub fn texts(input: &Value) -> Result<Vec<&str>, String> {
    let texts: Vec<&str> = match input {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|i| i.as_str().ok_or_else(token_input))
            .collect::<Result<_, _>>()?,
        Value::Array(_) => return Err("'input' must not be empty.".to_owned()),
        _ => return Err(token_input()),
    };
    if texts.len() > MAX_INPUTS {
        return Err(format!(
            "'input' may hold at most {MAX_INPUTS} strings for this model."
        ));
    }
    Ok(texts)
}

fn token_input() -> String {
    "'input' must be a string or an array of strings for this model (token arrays are not supported).".to_owned()
}

#[derive(Deserialize)]
struct Batch<'a> {
    #[serde(borrow)]
    embeddings: Vec<Embedding<'a>>,
}

#[derive(Deserialize)]
struct Embedding<'a> {
    /// Kept as the answer's own text: thousands of floats are copied, never parsed.
    #[serde(borrow)]
    values: &'a RawValue,
}

/// The OpenAI embeddings list for a `batchEmbedContents` answer; `model` names the model the
/// caller asked for. Usage is unknown (`None`): Gemini reports none.
pub fn read(bytes: &[u8], model: &str) -> Result<(Vec<u8>, Option<TokenCounts>), String> {
    let batch: Batch<'_> = serde_json::from_slice(bytes)
        .map_err(|_| "body is not a batchEmbedContents response".to_owned())?;
    let raw_len: usize = batch.embeddings.iter().map(|e| e.values.get().len()).sum();
    let mut out = Vec::with_capacity(raw_len + batch.embeddings.len() * 64 + 256);
    out.extend_from_slice(br#"{"object":"list","data":["#);
    for (index, e) in batch.embeddings.iter().enumerate() {
        if !e.values.get().trim_start().starts_with('[') {
            return Err("an embedding's values are not an array".to_owned());
        }
        if index > 0 {
            out.push(b',');
        }
        out.extend_from_slice(
            format!(r#"{{"object":"embedding","index":{index},"embedding":"#).as_bytes(),
        );
        out.extend_from_slice(e.values.get().as_bytes());
        out.push(b'}');
    }
    out.extend_from_slice(br#"],"model":"#);
    // Writing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, model);
    out.extend_from_slice(br#","usage":{"prompt_tokens":0,"total_tokens":0}}"#);
    Ok((out, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn the_path_names_the_model_for_a_batch() {
        assert_eq!(
            path("models/gemini-embedding-001"),
            "models/gemini-embedding-001:batchEmbedContents"
        );
    }

    #[test]
    fn each_input_string_is_one_request_naming_the_model_with_the_dimensions() {
        let b = json(&body("gemini-embedding-001", &json!(["a", "b"]), Some(768)).unwrap());
        assert_eq!(
            b,
            json!({"requests": [
                {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "a"}]}, "outputDimensionality": 768},
                {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "b"}]}, "outputDimensionality": 768},
            ]})
        );
        let one = json(&body("models/e", &json!("hi"), None).unwrap());
        assert_eq!(
            one,
            json!({"requests": [{"model": "models/e", "content": {"parts": [{"text": "hi"}]}}]})
        );
    }

    #[test]
    fn token_arrays_empty_and_oversized_inputs_are_refused() {
        assert!(body("e", &json!([1, 2, 3]), None).is_err());
        assert!(body("e", &json!([[1, 2]]), None).is_err());
        assert!(body("e", &json!(5), None).is_err());
        assert!(body("e", &json!([]), None).is_err());
        let many: Vec<String> = (0..=MAX_INPUTS).map(|i| i.to_string()).collect();
        assert!(body("e", &json!(many), None).is_err());
        assert!(body("e", &json!(many[..MAX_INPUTS]), None).is_ok());
    }

    #[test]
    fn a_batch_answer_becomes_an_openai_list_in_order_with_unknown_usage() {
        let answer = br#"{"embeddings":[{"values":[0.1,-0.2]},{"values":[3e-5, 1]}]}"#;
        let (bytes, usage) = read(answer, "embed-small").unwrap();
        assert_eq!(usage, None);
        assert_eq!(
            json(&bytes),
            json!({"object": "list", "data": [
                {"object": "embedding", "index": 0, "embedding": [0.1, -0.2]},
                {"object": "embedding", "index": 1, "embedding": [3e-5, 1]},
            ], "model": "embed-small", "usage": {"prompt_tokens": 0, "total_tokens": 0}})
        );
    }

    #[test]
    fn an_answer_of_another_shape_is_refused() {
        assert!(read(b"{}", "m").is_err());
        assert!(read(b"not json", "m").is_err());
        assert!(read(br#"{"embeddings":[{"values":"x"}]}"#, "m").is_err());
        assert!(read(br#"{"embeddings":[{}]}"#, "m").is_err());
    }
}
