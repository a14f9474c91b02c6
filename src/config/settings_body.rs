//! The bodies of the settings and breaker-reset writes: `PUT .../settings` is checked here, field
//! by field with its path (`breaker.window_ms: must be 1 to 86400000`), after the strict parse of
//! `admin_body::parse_body`.

use super::names::{ModelId, ProviderName};
use super::{ConfigError, SettingsOverrides};
use serde::Deserialize;

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerReset {
    #[serde(default)]
    pub provider: Option<ProviderName>,
    #[serde(default)]
    pub model: Option<ModelId>,
}

pub fn validate_settings(o: SettingsOverrides) -> Result<SettingsOverrides, ConfigError> {
    let within = |field: &str, v: Option<u64>, max: u64| match v {
        Some(v) if !(1..=max).contains(&v) => {
            Err(ConfigError::invalid(field, format!("must be 1 to {max}")))
        }
        _ => Ok(()),
    };
    within(
        "max_fallback_depth",
        o.max_fallback_depth.map(u64::from),
        u64::from(super::rule::MAX_DEPTH_LIMIT),
    )?;
    within(
        "breaker.error_threshold",
        o.breaker.error_threshold.map(u64::from),
        10_000,
    )?;
    within("breaker.window_ms", o.breaker.window_ms, 86_400_000)?;
    within(
        "breaker.open_duration_ms",
        o.breaker.open_duration_ms,
        86_400_000,
    )?;
    let durations = o.breaker.open_durations_ms.unwrap_or_default();
    if durations.as_slice().is_empty() && o.breaker.open_durations_ms.is_some() {
        return Err(ConfigError::invalid(
            "breaker.open_durations_ms",
            "must list 1 to 8 durations",
        ));
    }
    for &ms in durations.as_slice() {
        within("breaker.open_durations_ms", Some(ms), 86_400_000)?;
    }
    for (field, share) in [
        ("exploration_share", o.exploration_share),
        ("headroom_threshold", o.headroom_threshold),
    ] {
        if share.is_some_and(|s| !(s.is_finite() && (0.0..=1.0).contains(&s))) {
            return Err(ConfigError::invalid(field, "must be a number from 0 to 1"));
        }
    }
    o.degraded.as_ref().map(|d| d.validate()).transpose()?;
    o.alerts.as_ref().map(|a| a.validate()).transpose()?;
    crate::config::policy::validate_tenant_limits(o.budget, o.end_user)?;
    o.cache.map(|c| c.validate()).transpose()?;
    if let Some(r) = &o.restrictions {
        super::restriction::validate(r)?;
    }
    Ok(o)
}
