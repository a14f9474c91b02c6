//! Fixtures for the routing tests: a tenant config built through the admin bodies, and a table
//! of observed health.

use crate::config::admin_body::{parse_body, AliasBody, ModelBody, ProviderBody, RuleBody};
use crate::config::{AliasName, Defaults, ModelId, ProviderName, Settings, TenantConfig, TenantId};
use crate::routing::{ModelHealth, Observed};
use std::collections::HashMap;

/// Tenant `t` with these settings and an OpenAI-family provider of each name (one key).
pub fn tenant_with(settings: Settings, providers: &[&str]) -> TenantConfig {
    let mut cfg = TenantConfig::empty(TenantId::parse("t").unwrap(), settings);
    for p in providers {
        let body: ProviderBody =
            parse_body(br#"{"kind":"openai","base_url":"http://x/v1","keys":["k"]}"#).unwrap();
        let name = ProviderName::parse(p).unwrap();
        cfg.providers.insert(
            name.clone(),
            body.validate(name).unwrap().resolve(|_| None).unwrap(),
        );
    }
    cfg
}

/// Default settings, providers `openai` and `together`.
pub fn cfg() -> TenantConfig {
    tenant_with(Defaults::default().settings, &["openai", "together"])
}

pub fn add_model(cfg: &mut TenantConfig, id: &str, provider: &str, price: f64) {
    let json = format!(
        r#"{{"provider":"{provider}","context_window":8000,"input_price_per_mtok":{price},"capabilities":["chat"]}}"#
    );
    let body: ModelBody = parse_body(json.as_bytes()).unwrap();
    let id = ModelId::parse(id).unwrap();
    cfg.models.insert(id.clone(), body.validate(id).unwrap());
}

pub fn add_alias(cfg: &mut TenantConfig, name: &str, json: &str) {
    let body: AliasBody = parse_body(json.as_bytes()).unwrap();
    cfg.aliases
        .insert(AliasName::parse(name).unwrap(), body.validate().unwrap());
}

/// A rule from its admin body (`{"match":...,"chain":[...],"cache_affinity_s":...}`).
pub fn add_rule_json(cfg: &mut TenantConfig, json: &str) {
    let rule = parse_body::<RuleBody>(json.as_bytes())
        .unwrap()
        .validate(5)
        .unwrap();
    cfg.rules.add(rule);
}

/// Models m1 (openai, $1), m2 (together, $2) and m3 (openai, $3), and a rule `chat`: a spread of
/// m1 and m2, then m3; `rule_extra` is appended to the rule's body (`,"cache_affinity_s":60`).
pub fn spread_tenant(rule_extra: &str) -> TenantConfig {
    let mut c = cfg();
    add_model(&mut c, "m1", "openai", 1.0);
    add_model(&mut c, "m2", "together", 2.0);
    add_model(&mut c, "m3", "openai", 3.0);
    add_rule_json(
        &mut c,
        &format!(
            r#"{{"match":"chat","chain":[{{"spread":[{{"model":"m1","weight":1}},{{"model":"m2","weight":1}}]}},"m3"]{rule_extra}}}"#
        ),
    );
    c
}

/// Observed health by model id; a model not in the table is unknown.
#[derive(Default)]
pub struct Table(HashMap<String, ModelHealth>);

impl Table {
    pub fn of<'a>(rows: impl IntoIterator<Item = (&'a str, ModelHealth)>) -> Self {
        Self(rows.into_iter().map(|(m, h)| (m.to_owned(), h)).collect())
    }

    /// The models listed have their breaker open; nothing else is known.
    pub fn open(models: &[&str]) -> Self {
        let open = ModelHealth {
            breaker_open: true,
            ..ModelHealth::default()
        };
        Self::of(models.iter().map(|m| (*m, open)))
    }
}

impl Observed for Table {
    fn health(&self, _: &ProviderName, model: &ModelId) -> Option<ModelHealth> {
        self.0.get(model.as_str()).copied()
    }
}

/// A model from its admin body's fields after `provider` (`"input_price_per_mtok":3,...`).
pub fn add_model_json(cfg: &mut TenantConfig, id: &str, provider: &str, fields: &str) {
    let json = format!(r#"{{"provider":"{provider}","context_window":8000,{fields}}}"#);
    let body: ModelBody = parse_body(json.as_bytes()).unwrap();
    let id = ModelId::parse(id).unwrap();
    cfg.models.insert(id.clone(), body.validate(id).unwrap());
}

/// Health with only a measured cached share.
pub fn cached(share: f64) -> ModelHealth {
    ModelHealth {
        cached_share: Some(share),
        ..ModelHealth::default()
    }
}
