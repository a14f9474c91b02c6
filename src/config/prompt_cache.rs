//! Prompt-cache breakpoint injection, an alias's or routing rule's `prompt_cache`: opt-in, so a
//! name without it sends every request upstream as it always did.

use serde::{Deserialize, Serialize};

/// `{"inject": true, "ttl": "5m" | "1h"}`. Only `inject: true` marks anything; `ttl` is how long
/// the provider keeps what an injected mark writes.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptCache {
    pub inject: bool,
    #[serde(default, skip_serializing_if = "CacheTtl::is_default")]
    pub ttl: CacheTtl,
}

/// How long a cache write lives: the provider's 5-minute default, or the 1-hour tier (which
/// costs more per write and needs Anthropic's `extended-cache-ttl` beta).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub enum CacheTtl {
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

impl CacheTtl {
    pub fn is_default(&self) -> bool {
        *self == Self::FiveMinutes
    }
}

impl PromptCache {
    /// The TTL marks are injected with, `None` when the setting injects nothing.
    pub fn injection(setting: Option<&Self>) -> Option<CacheTtl> {
        setting.filter(|p| p.inject).map(|p| p.ttl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::{parse_body, AliasBody, RuleBody};

    fn alias_err(json: &str) -> String {
        parse_body::<AliasBody>(json.as_bytes())
            .and_then(AliasBody::validate)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn prompt_cache_reads_inject_and_a_ttl_of_5m_or_1h_defaulting_to_5m() {
        let a = parse_body::<AliasBody>(br#"{"prompt_cache":{"inject":true,"ttl":"1h"}}"#)
            .and_then(AliasBody::validate)
            .unwrap();
        assert_eq!(
            a.prompt_cache,
            Some(PromptCache {
                inject: true,
                ttl: CacheTtl::OneHour
            })
        );
        let r = parse_body::<RuleBody>(
            br#"{"match":"m","chain":["a"],"prompt_cache":{"inject":true}}"#,
        )
        .and_then(|b| b.validate(5))
        .unwrap();
        assert_eq!(
            PromptCache::injection(r.chain.prompt_cache().as_ref()),
            Some(CacheTtl::FiveMinutes)
        );
        let off = PromptCache {
            inject: false,
            ttl: CacheTtl::OneHour,
        };
        assert_eq!(PromptCache::injection(Some(&off)), None);
        assert_eq!(
            serde_json::to_string(&PromptCache {
                inject: true,
                ttl: CacheTtl::FiveMinutes
            })
            .unwrap(),
            r#"{"inject":true}"#
        );
    }

    #[test]
    fn an_unknown_ttl_a_wrong_type_or_an_unknown_field_is_refused_naming_the_field() {
        let e = alias_err(r#"{"prompt_cache":{"inject":true,"ttl":"2h"}}"#);
        assert!(e.starts_with("prompt_cache.ttl:"), "{e}");
        let e = alias_err(r#"{"prompt_cache":{"inject":"yes"}}"#);
        assert!(e.starts_with("prompt_cache.inject:"), "{e}");
        let e = alias_err(r#"{"prompt_cache":{"inject":true,"when":1}}"#);
        assert!(e.starts_with("prompt_cache"), "{e}");
        let e = alias_err(r#"{"prompt_cache":true}"#);
        assert!(e.starts_with("prompt_cache:"), "{e}");
        let e = alias_err(r#"{"prompt_cache":{"ttl":"1h"}}"#);
        assert!(e.starts_with("prompt_cache"), "{e}");
    }
}
