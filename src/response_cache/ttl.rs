//! The requested name's response-cache TTL: the matched rule's `cache_ttl_s` if a
//! rule matches this request, else the alias's; `None` when the name sets none.

use crate::config::{Chain, TenantConfig};
use crate::routing::condition::matched_rule;
use crate::routing::facts::RequestFacts;
use crate::routing::settings_owner::SettingsOwner;

pub fn name_cache_ttl_s(
    cfg: &TenantConfig,
    requested: &str,
    facts: Option<&RequestFacts>,
) -> Option<u32> {
    let rule = matched_rule(cfg, requested, facts).map(|r| &r.chain);
    let owner = SettingsOwner::of(cfg, requested, rule);
    owner.read(Chain::cache_ttl_s, |a| a.cache_ttl_s).flatten()
}

/// Whether any level of this tenant can opt a request in without its header: otherwise the
/// request path computes nothing for the cache. A tenant that forbids the cache never does.
pub fn tenant_may_cache(cfg: &TenantConfig) -> bool {
    if cfg.settings.cache.is_some_and(|c| c.forbids()) {
        return false;
    }
    cfg.settings
        .cache
        .is_some_and(|c| c.ttl_s.is_some_and(|t| t > 0))
        || cfg.aliases.values().any(|a| a.cache_ttl_s.is_some())
        || cfg.rules.iter().any(|r| r.chain.cache_ttl_s().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg};

    #[test]
    fn a_rule_s_cache_ttl_wins_over_its_alias_and_a_plain_model_has_none() {
        let mut c = cfg();
        add_model(&mut c, "m1", "openai", 1.0);
        assert!(!tenant_may_cache(&c));
        add_alias(&mut c, "fast", r#"{"pin":"m1","cache_ttl_s":60}"#);
        assert!(tenant_may_cache(&c));
        assert_eq!(name_cache_ttl_s(&c, "fast", None), Some(60));
        assert_eq!(name_cache_ttl_s(&c, "m1", None), None);
        add_rule_json(&mut c, r#"{"match":"fast","chain":["m1"],"cache_ttl_s":0}"#);
        assert_eq!(name_cache_ttl_s(&c, "fast", None), Some(0));
    }

    #[test]
    fn a_tenant_that_forbids_the_cache_never_opts_a_request_in_whatever_its_names_say() {
        let mut c = cfg();
        add_model(&mut c, "m1", "openai", 1.0);
        add_alias(&mut c, "fast", r#"{"pin":"m1","cache_ttl_s":60}"#);
        assert!(tenant_may_cache(&c));
        c.settings.cache = Some(crate::config::response_cache::CacheSettings {
            ttl_s: None,
            max_ttl_s: Some(0),
        });
        assert!(!tenant_may_cache(&c));
    }
}
