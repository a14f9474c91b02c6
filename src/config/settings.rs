//! Routing settings: deployment defaults from `[vars]`, optionally overridden per tenant.

pub use super::open_durations::OpenDurations;
use super::{ConfigError, RouteName};
use crate::config::{Budget, EndUserLimits};
use serde::{Deserialize, Serialize};

/// Per-tenant overrides as stored; every absent value falls back to the deployment default.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fallback_depth: Option<u32>,
    #[serde(default)]
    pub breaker: BreakerOverrides,
    /// Skip candidates whose `context_window` cannot hold the request (issue 17); off unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window_guard: Option<bool>,
    /// Issue 15 (`TenantLimits`); written out here because `flatten` and `deny_unknown_fields`
    /// do not combine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_user: Option<EndUserSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<RouteName>,
    /// Issue 22: the share of ranked requests that try a candidate with stale stats first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exploration_share: Option<f64>,
    /// Issue 27: the response cache (`config::response_cache`); absent is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<super::response_cache::CacheSettings>,
}

/// The share of ranked requests that explore when the tenant sets none (2%, issue 22).
pub const DEFAULT_EXPLORATION_SHARE: f64 = 0.02;

fn is_default_share(share: &f64) -> bool {
    *share == DEFAULT_EXPLORATION_SHARE
}

fn default_share() -> f64 {
    DEFAULT_EXPLORATION_SHARE
}

/// The tenant's `end_user` setting: limits applied to each end user separately (issue 15), and
/// whether every request must name its end user (issue 21).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndUserSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
    /// A request that names no end user is refused with 400, `param: "user"`, before any
    /// upstream or ledger call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

impl EndUserSettings {
    /// The limits that need counters; `None` when only `required` is set (no ledger call).
    pub fn limits(&self) -> Option<EndUserLimits> {
        (self.budget.is_some() || self.rpm.is_some()).then_some(EndUserLimits {
            budget: self.budget,
            rpm: self.rpm,
        })
    }

    /// An `end_user` object must say something: `null` is the way to have no end-user rules.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.limits().is_none() && !self.required {
            return Err(ConfigError::invalid(
                "end_user",
                "must set budget, rpm or required: true (null for no end-user rules)",
            ));
        }
        Ok(())
    }
}

/// Issue 15's tenant settings. None has a deployment default: absent is "no limit" and "no
/// default model".
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TenantLimits {
    /// The whole tenant's budget (every key together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// Limits applied to each end user separately, and whether a request must name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_user: Option<EndUserSettings>,
    /// The name a request without `model` is served as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<RouteName>,
}

impl TenantLimits {
    /// The per-end-user limits that need the ledger's counters.
    pub fn end_user_limits(&self) -> Option<EndUserLimits> {
        self.end_user.and_then(|e| e.limits())
    }

    /// `end_user.required`: every request must name its end user.
    pub fn end_user_required(&self) -> bool {
        self.end_user.is_some_and(|e| e.required)
    }
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_threshold: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_durations_ms: Option<OpenDurations>,
}

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakerSettings {
    pub error_threshold: u32,
    pub window_ms: u64,
    pub open_duration_ms: u64,
    /// Escalation on failed probes; empty (the default) is `[open_duration_ms]`. Absent in
    /// reports from older isolates, which then keep the fixed duration.
    #[serde(default, skip_serializing_if = "OpenDurations::is_single")]
    pub open_durations_ms: OpenDurations,
}

impl BreakerSettings {
    /// How long the breaker opens for its `level`th consecutive opening (0 = the trip).
    pub fn open_ms(&self, level: u32) -> u64 {
        self.open_durations_ms.at(level, self.open_duration_ms)
    }
}

/// What a tenant's requests actually run with.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub max_fallback_depth: u32,
    pub breaker: BreakerSettings,
    /// Seed 000 sends every request to every candidate, so the guard is opt-in per tenant (the
    /// request header `X-CogniGate-Truncate: oldest` turns it on for that request).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub context_window_guard: bool,
    /// Share (0 to 1) of requests to a stats-ranked name that put a stale candidate first
    /// (`routing::rank`); shown only when it is not the default 0.02.
    #[serde(default = "default_share", skip_serializing_if = "is_default_share")]
    pub exploration_share: f64,
    /// Issue 27: the response cache; absent is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<super::response_cache::CacheSettings>,
    #[serde(flatten)]
    pub limits: TenantLimits,
}

/// Deployment-wide values from `[vars]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    pub settings: Settings,
    pub request_budget_ms: u64,
    pub config_ttl_ms: u64,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            settings: Settings {
                max_fallback_depth: 5,
                breaker: BreakerSettings {
                    error_threshold: 5,
                    window_ms: 30_000,
                    open_duration_ms: 60_000,
                    open_durations_ms: OpenDurations::SINGLE,
                },
                context_window_guard: false,
                exploration_share: DEFAULT_EXPLORATION_SHARE,
                cache: None,
                limits: TenantLimits::default(),
            },
            request_budget_ms: 60_000,
            config_ttl_ms: 10_000,
        }
    }
}

impl Defaults {
    /// Reads `[vars]` through `lookup`; a missing var keeps its default, a malformed one is an error
    /// naming the var (a misconfigured deployment should fail loudly, not route with surprises).
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut d = Self::default();
        let read = |name: &str, slot: &mut u64| -> Result<(), String> {
            if let Some(raw) = lookup(name) {
                *slot = raw
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|v| *v > 0)
                    .ok_or_else(|| format!("var {name} must be a positive integer"))?;
            }
            Ok(())
        };
        let mut depth = u64::from(d.settings.max_fallback_depth);
        let mut threshold = u64::from(d.settings.breaker.error_threshold);
        read("ROUTING_MAX_FALLBACK_DEPTH", &mut depth)?;
        read("BREAKER_ERROR_THRESHOLD", &mut threshold)?;
        read("BREAKER_WINDOW_MS", &mut d.settings.breaker.window_ms)?;
        read(
            "BREAKER_OPEN_DURATION_MS",
            &mut d.settings.breaker.open_duration_ms,
        )?;
        read("REQUEST_BUDGET_MS", &mut d.request_budget_ms)?;
        read("CONFIG_TTL_MS", &mut d.config_ttl_ms)?;
        d.settings.max_fallback_depth =
            u32::try_from(depth).map_err(|_| "ROUTING_MAX_FALLBACK_DEPTH is too large")?;
        d.settings.breaker.error_threshold =
            u32::try_from(threshold).map_err(|_| "BREAKER_ERROR_THRESHOLD is too large")?;
        Ok(d)
    }

    pub fn effective(&self, o: &SettingsOverrides) -> Settings {
        let b = self.settings.breaker;
        Settings {
            max_fallback_depth: o
                .max_fallback_depth
                .unwrap_or(self.settings.max_fallback_depth),
            breaker: BreakerSettings {
                error_threshold: o.breaker.error_threshold.unwrap_or(b.error_threshold),
                window_ms: o.breaker.window_ms.unwrap_or(b.window_ms),
                open_duration_ms: o.breaker.open_duration_ms.unwrap_or(b.open_duration_ms),
                open_durations_ms: o.breaker.open_durations_ms.unwrap_or(b.open_durations_ms),
            },
            context_window_guard: o
                .context_window_guard
                .unwrap_or(self.settings.context_window_guard),
            exploration_share: o
                .exploration_share
                .unwrap_or(self.settings.exploration_share),
            cache: o.cache,
            limits: TenantLimits {
                budget: o.budget,
                end_user: o.end_user,
                default_model: o.default_model.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_overrides_fall_back_to_vars() {
        let d = Defaults::from_vars(|n| (n == "BREAKER_WINDOW_MS").then(|| "1000".to_owned()));
        let d = d.unwrap_or_default();
        let o = SettingsOverrides {
            max_fallback_depth: Some(3),
            ..Default::default()
        };
        let s = d.effective(&o);
        assert_eq!(s.max_fallback_depth, 3);
        assert_eq!(s.breaker.window_ms, 1000);
        assert_eq!(s.breaker.error_threshold, 5);
    }

    #[test]
    fn issue_17_settings_are_off_by_default_and_absent_from_the_seed_000_view() {
        let d = Defaults::default();
        let s = d.effective(&SettingsOverrides::default());
        assert!(!s.context_window_guard);
        assert!(s.breaker.open_durations_ms.is_single());
        assert_eq!(
            serde_json::to_value(s).unwrap(),
            serde_json::json!({"max_fallback_depth": 5, "breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": 60000}})
        );
        let o: SettingsOverrides = serde_json::from_str(
            r#"{"context_window_guard": true, "breaker": {"open_durations_ms": [1000, 3000]}}"#,
        )
        .unwrap();
        let s = d.effective(&o);
        assert!(s.context_window_guard);
        assert_eq!(s.breaker.open_ms(0), 1_000);
        assert_eq!(s.breaker.open_ms(5), 3_000);
    }

    #[test]
    fn malformed_var_is_named() {
        let err = Defaults::from_vars(|n| (n == "REQUEST_BUDGET_MS").then(|| "soon".to_owned()));
        assert_eq!(
            err.err().as_deref(),
            Some("var REQUEST_BUDGET_MS must be a positive integer")
        );
    }

    fn err_text<T: std::fmt::Debug>(r: Result<T, crate::config::ConfigError>) -> String {
        r.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn tenant_limits_and_default_model_are_settings_checked_like_the_rest() {
        let o = crate::config::admin_body::parse_body::<SettingsOverrides>(
            br#"{"budget":{"usd":10,"period":"month"},"end_user":{"rpm":5},"default_model":"fast"}"#,
        )
        .and_then(crate::config::admin_body::validate_settings)
        .unwrap();
        let s = Defaults::default().effective(&o);
        assert_eq!(
            s.limits.default_model.as_ref().map(|m| m.as_str()),
            Some("fast")
        );
        let view = serde_json::to_value(&s).unwrap();
        assert_eq!(
            view["budget"],
            serde_json::json!({"usd": 10.0, "period": "month"})
        );
        assert_eq!(view["end_user"], serde_json::json!({"rpm": 5}));
        let e = err_text(
            crate::config::admin_body::parse_body::<SettingsOverrides>(
                br#"{"end_user":{"budget":{"usd":-2,"period":"day"}}}"#,
            )
            .and_then(crate::config::admin_body::validate_settings),
        );
        assert_eq!(
            e,
            "end_user.budget.usd: must be a number from 0 to 1000000000"
        );
        let e = err_text(crate::config::admin_body::parse_body::<SettingsOverrides>(
            br#"{"default_model":"no spaces"}"#,
        ));
        assert!(e.starts_with("default_model:"), "{e}");
    }

    #[test]
    fn end_user_required_alone_is_a_setting_that_needs_no_counters() {
        let parse = |body: &str| {
            crate::config::admin_body::parse_body::<SettingsOverrides>(body.as_bytes())
                .and_then(crate::config::admin_body::validate_settings)
        };
        let o = parse(r#"{"end_user":{"required":true}}"#).unwrap();
        let s = Defaults::default().effective(&o);
        assert!(s.limits.end_user_required());
        assert_eq!(s.limits.end_user_limits(), None, "no ledger call for it");
        let view = serde_json::to_value(&s).unwrap();
        assert_eq!(view["end_user"], serde_json::json!({"required": true}));
        let o = parse(r#"{"end_user":{"required":true,"rpm":3}}"#).unwrap();
        let s = Defaults::default().effective(&o);
        assert_eq!(s.limits.end_user_limits().and_then(|l| l.rpm), Some(3));
        assert!(!Defaults::default()
            .effective(&parse(r#"{"end_user":{"rpm":3}}"#).unwrap())
            .limits
            .end_user_required());
        assert_eq!(
            err_text(parse(r#"{"end_user":{"required":false}}"#)),
            "end_user: must set budget, rpm or required: true (null for no end-user rules)"
        );
        assert!(
            err_text(parse(r#"{"end_user":{"required":"yes"}}"#)).starts_with("end_user.required:")
        );
        assert_eq!(
            err_text(parse(r#"{"end_user":{"required":true,"rpm":0}}"#)),
            "end_user.rpm: must be 1 to 1000000"
        );
    }
}
