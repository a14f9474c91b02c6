//! `/v1/models` and `/v1/models/{id}`: the caller's models and aliases as OpenAI model objects.
//! `created` is when the entry's current definition was written (`updated_at`, in seconds): the
//! tables have no creation time, and this is the real time the id took its present meaning.
//!
//! A key with a `models` list sees only the names it may use (`KeyPolicy::allows`): any other
//! name is absent from the list and 404 on its own, exactly as a name that does not exist, so a
//! scoped key learns nothing of the rest of the catalog.

use crate::api::{ApiError, ErrorKind};
use crate::config::{KeyPolicy, TenantConfig};
use crate::routing::auto::{self, AutoName};
use serde_json::{json, Value};

/// The models and aliases `policy` may use, as OpenAI model objects.
pub fn model_objects(cfg: &TenantConfig, policy: &KeyPolicy) -> Vec<Value> {
    let created = |id: &str| cfg.written_at.get(id).copied().unwrap_or(0);
    let models = cfg.models.values().filter(|m| policy.allows(m.id.as_str())).map(|m| {
        json!({"id": m.id, "object": "model", "created": created(m.id.as_str()), "owned_by": m.provider})
    });
    let aliases = cfg.aliases.keys().filter(|a| policy.allows(a.as_str())).map(|a| {
        json!({"id": a, "object": "model", "created": created(a.as_str()), "owned_by": "cognigate-alias"})
    });
    // The `auto` names this key may call (`auto::allowed_by`). `auto:<rule>` took its
    // meaning when its rule was written; a strategy when the newest model it ranks was.
    let newest_model = cfg.models.keys().map(|m| created(m.as_str())).max();
    let auto = auto::listed(cfg, |r| policy.allows(r))
        .into_iter()
        .map(|id| {
            let created = match auto::parse(&id) {
                Some(AutoName::Rule(_)) => cfg.written_at.get(&id).copied(),
                _ => newest_model,
            };
            let created = created.unwrap_or(0);
            json!({"id": id, "object": "model", "created": created, "owned_by": "cognigate-auto"})
        });
    models.chain(aliases).chain(auto).collect()
}

/// The SDKs' `models.retrieve`: the one object of the list named `id`, else 404 naming it.
pub fn model_object(cfg: &TenantConfig, policy: &KeyPolicy, id: &str) -> Result<Value, ApiError> {
    model_objects(cfg, policy)
        .into_iter()
        .find(|o| o["id"] == id)
        .ok_or_else(|| {
            ApiError::new(
                ErrorKind::ModelNotFound,
                format!("The model '{id}' does not exist."),
            )
            .with_param("model")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RouteName;
    use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg};

    fn catalog() -> TenantConfig {
        let mut c = cfg();
        add_model(&mut c, "m1", "openai", 1.0);
        add_model(&mut c, "m2", "together", 2.0);
        add_alias(
            &mut c,
            "fast",
            r#"{"capabilities":["chat"],"rank_by":"latency"}"#,
        );
        add_alias(&mut c, "cheap", r#"{"capabilities":["chat"]}"#);
        add_rule_json(
            &mut c,
            r#"{"name":"coding","match":"smart","chain":["m2"]}"#,
        );
        c.written_at.insert("m1".into(), 100);
        c.written_at.insert("m2".into(), 200);
        c.written_at.insert("fast".into(), 150);
        c.written_at.insert("auto:coding".into(), 50);
        c
    }

    fn ids(objects: &[Value]) -> Vec<String> {
        objects
            .iter()
            .map(|o| o["id"].as_str().unwrap().to_owned())
            .collect()
    }

    fn only(names: &[&str]) -> KeyPolicy {
        let mut names: Vec<RouteName> =
            names.iter().map(|n| RouteName::parse(n).unwrap()).collect();
        names.sort();
        KeyPolicy {
            models: Some(names),
            ..KeyPolicy::default()
        }
    }

    fn find<'a>(objects: &'a [Value], id: &str) -> &'a Value {
        objects.iter().find(|o| o["id"] == id).unwrap()
    }

    #[test]
    fn models_then_aliases_then_auto_names_each_owned_by_whom_serves_it() {
        let all = model_objects(&catalog(), &KeyPolicy::default());
        let listed = ids(&all);
        assert_eq!(listed[..4], ["m1", "m2", "cheap", "fast"]);
        assert!(listed.contains(&"auto:coding".to_owned()), "{listed:?}");
        assert_eq!(find(&all, "m1")["owned_by"], "openai");
        assert_eq!(find(&all, "fast")["owned_by"], "cognigate-alias");
        assert_eq!(find(&all, "auto:coding")["owned_by"], "cognigate-auto");
        assert!(all.iter().all(|o| o["object"] == "model"));
    }

    #[test]
    fn created_is_when_the_definition_was_written_and_a_strategy_takes_its_newest_model() {
        let all = model_objects(&catalog(), &KeyPolicy::default());
        assert_eq!(find(&all, "m2")["created"], 200);
        assert_eq!(find(&all, "fast")["created"], 150);
        assert_eq!(find(&all, "auto:coding")["created"], 50);
        assert_eq!(find(&all, "auto")["created"], 200);
    }

    #[test]
    fn a_scoped_key_sees_only_the_names_it_may_use_and_the_rest_are_404() {
        let c = catalog();
        let key = only(&["m1", "fast"]);
        assert_eq!(ids(&model_objects(&c, &key)), ["m1", "fast"]);
        assert_eq!(model_object(&c, &key, "fast").unwrap()["id"], "fast");
        let hidden = model_object(&c, &key, "m2").unwrap_err();
        let absent = model_object(&c, &key, "nope").unwrap_err();
        assert_eq!(hidden.status(), 404);
        assert_eq!(absent.status(), hidden.status());
    }
}
