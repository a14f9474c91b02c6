//! A surface's own body sent to a family that speaks it natively (Messages to Anthropic,
//! embeddings to OpenAI-compatible APIs): the caller's fields as sent, with only the model (or,
//! for Vertex AI, where the model is in the URL, the API version) put in.

use crate::api::raw_json::ObjectWriter;
use crate::api::ChatRequest;
use crate::providers::address::VERTEX_ANTHROPIC_VERSION;

/// A Messages body for Vertex AI: the model is in the URL, the API version in the body.
pub fn for_vertex(raw: &ChatRequest) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.body_len() + 48);
    let mut object = ObjectWriter::new(&mut out);
    for (field, value) in raw.fields().filter(|(k, _)| *k != "model") {
        object.raw_field(field, value);
    }
    object.string_field("anthropic_version", VERTEX_ANTHROPIC_VERSION);
    object.close();
    out
}

/// The caller's body field by field with only `model` replaced.
pub fn with_model(raw: &ChatRequest, upstream_model: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.body_len() + upstream_model.len());
    let mut object = ObjectWriter::new(&mut out);
    for (field, value) in raw.fields().filter(|(k, _)| *k != "model") {
        object.raw_field(field, value);
    }
    object.string_field("model", upstream_model);
    object.close();
    out
}
