//! How stored config is shown to admins: never a provider key, only its id and last four characters.

use crate::config::{Alias, AliasName, CatalogModel, Chain, RouteName, StoredKey, StoredProvider};
use serde_json::{json, Value};

pub fn provider(p: &StoredProvider) -> Value {
    let keys: Vec<Value> = p
        .keys
        .iter()
        .map(|k| match k {
            StoredKey::Sealed { id, last4, .. } => json!({"id": id, "last4": last4}),
            StoredKey::Secret { id, secret_name } => json!({"id": id, "secret": secret_name}),
        })
        .collect();
    json!({
        "name": p.name,
        "kind": p.kind,
        "base_url": p.base_url,
        "keys": keys,
        "key_strategy": p.key_strategy,
        "timeout_ms": p.timeout_ms,
        "retry": p.resilience.retry,
        "rate_limit_signals": p.resilience.rate_limit_signals,
        "auth_cooldown_ms": p.resilience.auth_cooldown_ms,
        "rpm": p.resilience.rpm,
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
    use crate::config::admin_body::{parse_body, ProviderBody};
    use crate::config::sealed::Kek;
    use crate::config::{ProviderName, TenantId};

    #[test]
    fn provider_view_shows_key_ids_last_four_and_secret_names_only() {
        let p: ProviderBody = parse_body(
            br#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["sk-live-abcdefgh1234",{"secret":"PROVIDER_OPENAI_2"}]}"#,
        )
        .unwrap();
        let kek = Kek::from_hex(&"11".repeat(32)).unwrap();
        let tenant = TenantId::parse("acme").unwrap();
        let p = p
            .validate(ProviderName::parse("openai").unwrap())
            .unwrap()
            .seal(&tenant, Some(&kek), || Some([3; 12]))
            .unwrap();
        let shown = provider(&p).to_string();
        assert!(!shown.contains("sk-live-abcdefgh1234"));
        assert!(!shown.contains("abcdefgh"));
        assert!(!shown.contains("sealed") && !shown.contains("v1:"));
        assert!(shown.contains(r#""last4":"1234""#));
        assert!(shown.contains(r#""secret":"PROVIDER_OPENAI_2""#));
        assert!(shown.contains(p.keys[0].id()));
    }
}
