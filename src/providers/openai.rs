//! OpenAI-compatible targets: the caller's body, with the upstream model name and reasoning made
//! safe for the target.

use super::reasoning;
use crate::api::ChatRequest;
use crate::config::{Capability, CatalogModel};
use serde_json::{Map, Value};

/// A model that accepts `reasoning_effort` says so with the `reasoning` capability; to any other
/// it is not sent, since an OpenAI model that does not reason refuses it with a 400.
fn reasons(model: &CatalogModel) -> bool {
    Capability::parse("reasoning").is_ok_and(|c| model.has_capability(&c))
}

pub fn body(model: &CatalogModel, req: &ChatRequest) -> Map<String, Value> {
    let mut body = req.body().clone();
    body.insert("model".into(), Value::String(model.upstream_model.clone()));
    // Reasoning replayed from earlier turns is not accepted back by OpenAI-compatible APIs.
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        for m in messages.iter_mut().filter_map(Value::as_object_mut) {
            reasoning::strip(m);
        }
    }
    // Anthropic's `thinking` parameter becomes the nearest `reasoning_effort`.
    let budget = reasoning::thinking_budget(&body);
    body.remove("thinking");
    if reasons(model) {
        if let (Some(b), false) = (budget, body.contains_key("reasoning_effort")) {
            body.insert(
                "reasoning_effort".into(),
                reasoning::effort_for_budget(b).into(),
            );
        }
    } else {
        body.remove("reasoning_effort");
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin::{parse_body, ModelBody};
    use crate::config::ModelId;
    use serde_json::json;

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
}
