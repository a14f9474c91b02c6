//! OpenAI-compatible targets: the caller's body, with the upstream model name and reasoning made
//! safe for the target.

use super::reasoning;
use crate::api::raw_json::{self, ObjectWriter};
use crate::api::ChatRequest;
use crate::config::{Capability, CatalogModel};

/// A model that accepts `reasoning_effort` says so with the `reasoning` capability; to any other
/// it is not sent, since an OpenAI model that does not reason refuses it with a 400.
fn reasons(model: &CatalogModel) -> bool {
    Capability::parse("reasoning").is_ok_and(|c| model.has_capability(&c))
}

/// The caller's body with the upstream model, written field by field from the raw JSON: only
/// `messages` is rewritten (one message at a time) when it carries reasoning to strip.
pub fn body(model: &CatalogModel, req: &ChatRequest) -> Vec<u8> {
    let reasons = reasons(model);
    let mut out = Vec::with_capacity(req.body_len() + 64);
    let mut object = ObjectWriter::new(&mut out);
    for (field, raw) in req.fields() {
        match field {
            // Replaced below; Anthropic's `thinking` becomes the nearest `reasoning_effort`.
            "model" | "thinking" => {}
            "reasoning_effort" if !reasons => {}
            // Written below, asking for the usage chunk.
            "stream_options" if req.stream => {}
            // Reasoning replayed from earlier turns is not accepted back by OpenAI-compatible APIs.
            "messages" if req.messages_have_reasoning() => {
                let out = object.key(field);
                if raw_json::write_messages_without(raw, reasoning::REASONING_FIELDS, out).is_err()
                {
                    // Checked at parse; unreachable, but the body stays valid JSON.
                    out.extend_from_slice(b"[]");
                }
            }
            _ => object.raw_field(field, raw),
        }
    }
    object.string_field("model", &model.upstream_model);
    if req.stream {
        // The gateway always asks for usage; the relay strips the usage chunk again when the
        // caller did not ask for it (`usage::StreamUsage`).
        let options = stream_options_with_usage(req.value("stream_options"));
        // Writing a Value into a Vec cannot fail.
        let _ = serde_json::to_writer(object.key("stream_options"), &options);
    }
    let budget = reasoning::thinking_budget(req.value("thinking").as_ref());
    let has_effort = req.fields().any(|(k, _)| k == "reasoning_effort");
    if let (true, Some(b), false) = (reasons, budget, has_effort) {
        object.string_field("reasoning_effort", reasoning::effort_for_budget(b));
    }
    object.close();
    out
}

/// The caller's `stream_options` (an object, checked at parse) with `include_usage: true`.
fn stream_options_with_usage(options: Option<serde_json::Value>) -> serde_json::Value {
    let mut options = match options {
        Some(serde_json::Value::Object(o)) => o,
        _ => serde_json::Map::new(),
    };
    options.insert("include_usage".into(), true.into());
    serde_json::Value::Object(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::{parse_body, ModelBody};
    use crate::config::ModelId;
    use serde_json::{json, Value};

    fn model(caps: &str) -> CatalogModel {
        let m: ModelBody = parse_body(
            format!(r#"{{"provider":"p","upstream_model":"up","context_window":8000,"capabilities":{caps}}}"#).as_bytes(),
        )
        .unwrap();
        m.validate(ModelId::parse("m").unwrap()).unwrap()
    }

    fn req(v: Value) -> ChatRequest {
        ChatRequest::parse(v.to_string().as_bytes()).unwrap()
    }

    fn body(model: &CatalogModel, req: &ChatRequest) -> Value {
        serde_json::from_slice(&super::body(model, req)).unwrap()
    }

    #[test]
    fn upstream_body_carries_the_upstream_model_and_everything_else() {
        let b = body(
            &model(r#"["chat"]"#),
            &req(
                json!({"model":"fast","temperature":0.2,"messages":[{"role":"user","content":"hi"}]}),
            ),
        );
        assert_eq!(b["model"], "up");
        assert_eq!(b["temperature"], 0.2);
        assert_eq!(b["messages"][0]["content"], "hi");
    }

    #[test]
    fn reasoning_from_earlier_turns_is_stripped() {
        let b = body(
            &model(r#"["chat"]"#),
            &req(json!({"model":"m","messages":[
                {"role":"user","content":"q"},
                {"role":"assistant","content":"a","reasoning_content":"I think...","thinking_blocks":[{"type":"thinking","thinking":"x","signature":"sig"}]},
                {"role":"user","content":"q2"}]})),
        );
        assert_eq!(b["messages"][1], json!({"role":"assistant","content":"a"}));
    }

    #[test]
    fn reasoning_effort_goes_only_to_models_that_reason() {
        let r = req(json!({"model":"m","messages":[],"reasoning_effort":"high"}));
        assert!(body(&model(r#"["chat"]"#), &r)
            .get("reasoning_effort")
            .is_none());
        assert_eq!(
            body(&model(r#"["chat","reasoning"]"#), &r)["reasoning_effort"],
            "high"
        );
    }

    #[test]
    fn an_anthropic_thinking_budget_becomes_reasoning_effort() {
        let r = req(
            json!({"model":"m","messages":[],"thinking":{"type":"enabled","budget_tokens":16000}}),
        );
        let b = body(&model(r#"["chat","reasoning"]"#), &r);
        assert_eq!(b["reasoning_effort"], "high");
        assert!(b.get("thinking").is_none());
        assert!(body(&model(r#"["chat"]"#), &r).get("thinking").is_none());
    }

    #[test]
    fn a_streamed_request_asks_the_upstream_for_usage_and_keeps_the_callers_stream_options() {
        let m = model(r#"["chat"]"#);
        let b = body(&m, &req(json!({"model":"m","stream":true,"messages":[]})));
        assert_eq!(b["stream_options"], json!({"include_usage": true}));
        let b = body(
            &m,
            &req(json!({"model":"m","stream":true,"messages":[],
                "stream_options":{"include_usage":false,"include_obfuscation":false}})),
        );
        assert_eq!(
            b["stream_options"],
            json!({"include_usage": true, "include_obfuscation": false})
        );
        let b = body(&m, &req(json!({"model":"m","messages":[]})));
        assert!(
            b.get("stream_options").is_none(),
            "not for a non-streamed request"
        );
    }
}
