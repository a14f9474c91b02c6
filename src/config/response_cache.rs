//! The response cache's settings: the tenant's `cache` setting and the `cache_ttl_s`
//! of an alias or routing rule. Opt-in: absent everywhere, nothing is hashed or looked up.

use super::ConfigError;
use serde::{Deserialize, Serialize};

/// The longest TTL any level may name: 30 days.
pub const MAX_CACHE_TTL_S: u32 = 2_592_000;
/// The cap on every level's TTL when the tenant sets no `max_ttl_s`: a day.
pub const DEFAULT_MAX_TTL_S: u32 = 86_400;

/// The tenant's `cache` setting: `{"ttl_s": N, "max_ttl_s": M}`.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSettings {
    /// Every request of the tenant is cached this long (seconds; 0 or absent: only names and
    /// requests that opt in are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_s: Option<u32>,
    /// The cap on every level's TTL, the request header's included (default 86,400); 0 forbids
    /// the cache to every caller of the tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ttl_s: Option<u32>,
}

impl CacheSettings {
    pub fn max_ttl_s(&self) -> u32 {
        self.max_ttl_s.unwrap_or(DEFAULT_MAX_TTL_S)
    }

    /// The tenant's no: nothing of it is looked up or stored, whatever a request asks.
    pub fn forbids(&self) -> bool {
        self.max_ttl_s == Some(0)
    }

    pub fn validate(self) -> Result<Self, ConfigError> {
        check_cache_ttl("cache.ttl_s", self.ttl_s)?;
        check_cache_ttl("cache.max_ttl_s", self.max_ttl_s)?;
        if let Some(ttl) = self.ttl_s.filter(|t| *t > self.max_ttl_s()) {
            return Err(ConfigError::invalid(
                "cache.ttl_s",
                format!("{ttl} is above max_ttl_s ({})", self.max_ttl_s()),
            ));
        }
        Ok(self)
    }
}

/// `cache_ttl_s` (alias, rule) or `cache.ttl_s` as written: 0 (off) to `MAX_CACHE_TTL_S`.
pub fn check_cache_ttl(field: &str, secs: Option<u32>) -> Result<Option<u32>, ConfigError> {
    match secs {
        Some(s) if s > MAX_CACHE_TTL_S => Err(ConfigError::invalid(
            field,
            format!("must be 0 to {MAX_CACHE_TTL_S} seconds"),
        )),
        s => Ok(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(c: CacheSettings) -> String {
        c.validate()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn cache_settings_name_the_field_they_break() {
        let ok = CacheSettings {
            ttl_s: Some(60),
            max_ttl_s: None,
        };
        assert_eq!(ok.validate(), Ok(ok));
        assert_eq!(ok.max_ttl_s(), DEFAULT_MAX_TTL_S);
        assert!(err(CacheSettings {
            ttl_s: Some(MAX_CACHE_TTL_S + 1),
            max_ttl_s: None
        })
        .starts_with("cache.ttl_s:"));
        assert!(err(CacheSettings {
            ttl_s: None,
            max_ttl_s: Some(MAX_CACHE_TTL_S + 1)
        })
        .starts_with("cache.max_ttl_s:"));
        assert!(err(CacheSettings {
            ttl_s: Some(100),
            max_ttl_s: Some(50)
        })
        .starts_with("cache.ttl_s: 100 is above max_ttl_s"));
        assert_eq!(check_cache_ttl("cache_ttl_s", Some(0)), Ok(Some(0)));
    }

    #[test]
    fn a_max_ttl_s_of_0_is_accepted_and_forbids_the_cache_with_no_ttl_above_it() {
        let no = CacheSettings {
            ttl_s: None,
            max_ttl_s: Some(0),
        };
        assert_eq!(no.validate(), Ok(no));
        assert!(no.forbids());
        let zero = CacheSettings {
            ttl_s: Some(0),
            ..no
        };
        assert_eq!(zero.validate(), Ok(zero));
        assert!(err(CacheSettings {
            ttl_s: Some(5),
            ..no
        })
        .starts_with("cache.ttl_s: 5 is above max_ttl_s (0)"));
        assert!(
            !CacheSettings::default().forbids(),
            "absent: the default cap"
        );
    }

    #[test]
    fn the_tenant_setting_is_checked_like_the_other_settings_with_its_field_path() {
        use crate::config::admin_body::{parse_body, validate_settings};
        use crate::config::SettingsOverrides;
        let parse = |b: &str| {
            parse_body::<SettingsOverrides>(b.as_bytes())
                .and_then(validate_settings)
                .map_err(|e| e.to_string())
        };
        let o = parse(r#"{"cache":{"ttl_s":60}}"#).unwrap_or_default();
        let s = crate::config::Defaults::default().effective(&o);
        assert_eq!(s.cache.and_then(|c| c.ttl_s), Some(60));
        assert!(parse(r#"{"cache":{"ttl_s":"soon"}}"#)
            .err()
            .is_some_and(|e| e.starts_with("cache.ttl_s:")));
        assert!(parse(r#"{"cache":{"ttl":5}}"#)
            .err()
            .is_some_and(|e| e.starts_with("cache")));
        assert!(parse(r#"{"cache":{"max_ttl_s":-1}}"#)
            .err()
            .is_some_and(|e| e.starts_with("cache.max_ttl_s:")));
        assert_eq!(
            crate::config::Defaults::default()
                .effective(&SettingsOverrides::default())
                .cache,
            None,
            "off by default"
        );
    }
}
