//! Which prompt-cache setting a request's route carries: its settings' owner's
//! (`routing::settings_owner`), the same resolution as `on_refusal`.

use super::settings_owner::SettingsOwner;
use crate::config::{CacheTtl, Chain, PromptCache};

/// The TTL breakpoints are injected with for the name `owner` holds (`None`: nothing is injected).
pub fn injection(owner: SettingsOwner<'_>) -> Option<CacheTtl> {
    let setting = owner
        .read(Chain::prompt_cache, |a| a.prompt_cache)
        .flatten();
    PromptCache::injection(setting.as_ref())
}

#[cfg(test)]
mod tests {
    use crate::config::CacheTtl;
    use crate::routing::test_config::{add_alias, add_model, add_rule_json, cfg};
    use crate::routing::{build_chain, RouteInput};

    #[test]
    fn a_matched_rule_decides_injection_else_the_requested_alias_and_a_bare_model_has_none() {
        let mut c = cfg();
        add_model(&mut c, "a", "openai", 1.0);
        add_alias(
            &mut c,
            "cached",
            r#"{"prompt_cache":{"inject":true,"ttl":"1h"}}"#,
        );
        add_alias(&mut c, "plain", r#"{"cost_tier":"cheapest"}"#);
        add_rule_json(&mut c, r#"{"match":"app","chain":["cached"]}"#);
        add_rule_json(
            &mut c,
            r#"{"match":"app2","chain":["plain"],"prompt_cache":{"inject":true}}"#,
        );
        let ttl = |name: &str| {
            build_chain(&c, name, &RouteInput::unmeasured())
                .unwrap()
                .prompt_cache
        };
        assert_eq!(ttl("cached"), Some(CacheTtl::OneHour));
        assert_eq!(ttl("plain"), None);
        assert_eq!(ttl("a"), None);
        assert_eq!(
            ttl("app"),
            None,
            "the rule's (absent) setting, not its alias's"
        );
        assert_eq!(ttl("app2"), Some(CacheTtl::FiveMinutes));
    }
}
