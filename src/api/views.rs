//! How stored config is shown to admins: never a provider key, only its id and last four characters.

use crate::config::{Alias, AliasName, CatalogModel, Chain, Provider, RouteName};
use serde_json::{json, Value};

pub fn provider(p: &Provider) -> Value {
    let keys: Vec<Value> = p
        .keys
        .iter()
        .map(|k| json!({"id": k.id, "last4": k.secret.last4()}))
        .collect();
    json!({
        "name": p.name,
        "kind": p.kind,
        "base_url": p.base_url,
        "keys": keys,
        "key_strategy": p.key_strategy,
        "timeout_ms": p.timeout_ms,
    })
}

pub fn model(m: &CatalogModel) -> Value {
    json!(m)
}

pub fn alias(name: &AliasName, a: &Alias) -> Value {
    let mut v = json!(a);
    if let Some(obj) = v.as_object_mut() {
        obj.insert("name".into(), json!(name));
    }
    v
}

pub fn rule(matches: &RouteName, chain: &Chain) -> Value {
    json!({"match": matches, "chain": chain})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin::{parse_body, ProviderBody};
    use crate::config::ProviderName;

    #[test]
    fn provider_view_shows_key_ids_and_last_four_only() {
        let p: ProviderBody = parse_body(
            br#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["sk-live-abcdefgh1234"]}"#,
        )
        .unwrap();
        let p = p.validate(ProviderName::parse("openai").unwrap()).unwrap();
        let shown = provider(&p).to_string();
        assert!(!shown.contains("sk-live-abcdefgh1234"));
        assert!(!shown.contains("abcdefgh"));
        assert!(shown.contains(r#""last4":"1234""#));
        assert!(shown.contains(&p.keys[0].id));
    }
}
