//! Fixtures for the routing tests: a tenant config built through the admin bodies, and a table
//! of observed health.

use crate::config::admin_body::{parse_body, AliasBody, ModelBody, ProviderBody, RuleBody};
use crate::config::{AliasName, Defaults, ModelId, ProviderName, TenantConfig, TenantId};
use crate::routing::{ModelHealth, Observed};
use std::collections::BTreeSet;

pub fn cfg() -> TenantConfig {
    let mut cfg = TenantConfig::empty(TenantId::parse("t").unwrap(), Defaults::default().settings);
    for p in ["openai", "together"] {
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
    let (matches, chain) = parse_body::<RuleBody>(json.as_bytes())
        .unwrap()
        .validate(5)
        .unwrap();
    cfg.rules.insert(matches, chain);
}

/// Observed health: the models listed have their breaker open; nothing else is known.
#[derive(Default)]
pub struct Table(BTreeSet<String>);

impl Table {
    pub fn open(models: &[&str]) -> Self {
        Self(models.iter().map(|m| (*m).to_owned()).collect())
    }
}

impl Observed for Table {
    fn health(&self, _: &ProviderName, model: &ModelId) -> Option<ModelHealth> {
        self.0.contains(model.as_str()).then(|| ModelHealth {
            breaker_open: true,
            ..ModelHealth::default()
        })
    }
}
