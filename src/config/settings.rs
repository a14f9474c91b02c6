//! Routing settings: deployment defaults from `[vars]`, optionally overridden per tenant.

pub use super::alerts::{AlertEvent, Alerts, WebhookUrl};
pub use super::degraded::{DegradedOverrides, DegradedSettings};
pub use super::open_durations::OpenDurations;
use super::restriction::Restriction;
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
    /// Skip candidates whose `context_window` cannot hold the request; off unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window_guard: Option<bool>,
    /// The tenant's limits (`TenantLimits`); written out here because `flatten` and
    /// `deny_unknown_fields` do not combine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_user: Option<EndUserSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<RouteName>,
    /// A model id or alias appended after a chain that has no link of its own
    /// (`routing::fallback_link`); checked against the catalog when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<RouteName>,
    /// The share of ranked requests that try a candidate with stale stats first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exploration_share: Option<f64>,
    /// Below this headroom a model's best key holds back its ranking score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom_threshold: Option<f64>,
    /// Scheduled probes of open breakers; on unless `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes: Option<bool>,
    /// Degraded mode's ratio and graces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<DegradedOverrides>,
    /// The webhook events are POSTed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<Alerts>,
    /// The response cache (`config::response_cache`); absent is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<super::response_cache::CacheSettings>,
    /// Trace export to the tenant's OTLP receiver (`config::otel`); absent is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otel: Option<super::otel::OtelSettings>,
    /// Where a matching request's data may be sent (`config::restriction`, which reads it);
    /// absent or null is anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        not(target_arch = "wasm32"),
        schemars(with = "Option<Vec<super::restriction::RestrictionBody>>")
    )]
    pub restrictions: Option<serde_json::Value>,
}

/// The share of ranked requests that explore when the tenant sets none (2%).
pub const DEFAULT_EXPLORATION_SHARE: f64 = 0.02;

fn is_default_share(share: &f64) -> bool {
    *share == DEFAULT_EXPLORATION_SHARE
}

fn default_share() -> f64 {
    DEFAULT_EXPLORATION_SHARE
}

/// The headroom below which a ranked model's score is held back when the tenant sets none.
pub const DEFAULT_HEADROOM_THRESHOLD: f64 = 0.1;

fn is_default_threshold(threshold: &f64) -> bool {
    *threshold == DEFAULT_HEADROOM_THRESHOLD
}

fn default_threshold() -> f64 {
    DEFAULT_HEADROOM_THRESHOLD
}

/// The tenant's `end_user` setting: limits applied to each end user separately, and
/// whether every request must name its end user.
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

/// The tenant settings. None has a deployment default: absent is "no limit" and "no
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
    /// Tried after a chain that has no link of its own, unless a rule matched; absent when
    /// unset. A name deleted since it was written is skipped like a dead link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<RouteName>,
    /// The spec sends every request to every candidate, so the guard is opt-in per tenant (the
    /// request header `X-CogniGate-Truncate: oldest` turns it on for that request).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub context_window_guard: bool,
    /// Share (0 to 1) of requests to a stats-ranked name that put a stale candidate first
    /// (`routing::rank`); shown only when it is not the default 0.02.
    #[serde(default = "default_share", skip_serializing_if = "is_default_share")]
    pub exploration_share: f64,
    /// A model whose best key's headroom is below this (0 to 1) has its `score` and `auto`
    /// ranking score multiplied by `0.5 + 0.5 × headroom / threshold` (`routing::rank`); shown
    /// only when it is not the default 0.1.
    #[serde(
        default = "default_threshold",
        skip_serializing_if = "is_default_threshold"
    )]
    pub headroom_threshold: f64,
    /// Scheduled probes of this tenant's open breakers; shown only when off.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub probes: bool,
    /// Degraded mode; shown only when not the default.
    #[serde(default, skip_serializing_if = "DegradedSettings::is_default")]
    pub degraded: DegradedSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<Alerts>,
    /// Runtime state, not a setting: since when the tenant is degraded, read with the
    /// config so the request path needs no round trip for it. Never shown or written.
    #[serde(skip)]
    #[cfg_attr(not(target_arch = "wasm32"), schemars(skip))]
    pub degraded_since: Option<u64>,
    /// The response cache; absent is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<super::response_cache::CacheSettings>,
    /// Trace export, its header values never shown (and never read back).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub otel: Option<super::otel::OtelShown>,
    /// Where a matching request's data may be sent; shown as written, absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        not(target_arch = "wasm32"),
        schemars(with = "Vec<super::restriction::RestrictionBody>")
    )]
    pub restrictions: Vec<Restriction>,
    #[serde(flatten)]
    pub limits: TenantLimits,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Settings {
    /// What the restrictions' conditions read of a request.
    pub fn restriction_reads(&self) -> super::condition::Reads {
        self.restrictions
            .iter()
            .fold(Default::default(), |r, x| r.with(x.reads()))
    }

    /// The tenant's degraded mode as the request path sees it: while degraded,
    /// exploration is off (ranked names serve their best-ranked model, no stale candidate first).
    pub fn with_degraded_since(mut self, since: Option<u64>) -> Self {
        self.degraded_since = since;
        if since.is_some() {
            self.exploration_share = 0.0;
        }
        self
    }
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
                fallback_model: None,
                context_window_guard: false,
                exploration_share: DEFAULT_EXPLORATION_SHARE,
                headroom_threshold: DEFAULT_HEADROOM_THRESHOLD,
                probes: true,
                degraded: DegradedSettings::default(),
                alerts: None,
                degraded_since: None,
                cache: None,
                otel: None,
                restrictions: Vec::new(),
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
            fallback_model: o.fallback_model.clone(),
            context_window_guard: o
                .context_window_guard
                .unwrap_or(self.settings.context_window_guard),
            exploration_share: o
                .exploration_share
                .unwrap_or(self.settings.exploration_share),
            headroom_threshold: o
                .headroom_threshold
                .unwrap_or(self.settings.headroom_threshold),
            probes: o.probes.unwrap_or(self.settings.probes),
            degraded: match &o.degraded {
                Some(d) => self.settings.degraded.with(d),
                None => self.settings.degraded,
            },
            alerts: o.alerts.clone(),
            degraded_since: None,
            cache: o.cache,
            otel: o.otel.as_ref().map(super::otel::OtelSettings::shown),
            restrictions: super::restriction::read_all(o.restrictions.as_ref()),
            limits: TenantLimits {
                budget: o.budget,
                end_user: o.end_user,
                default_model: o.default_model.clone(),
            },
        }
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
