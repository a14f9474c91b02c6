//! Per-provider opt-ins: same-candidate retries, extra rate-limit signals, benched
//! credentials and a request rate. Every default is the spec's behaviour, and rows stored before
//! these fields existed load with those defaults.

use super::ConfigError;
use serde::{Deserialize, Serialize};

/// Same-candidate retries of transient failures, with full-jitter exponential backoff.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    #[serde(default)]
    pub max_retries: u32,
    #[serde(default = "default_base_delay")]
    pub base_delay_ms: u64,
    #[serde(default = "default_max_delay")]
    pub max_delay_ms: u64,
}

fn default_base_delay() -> u64 {
    100
}

fn default_max_delay() -> u64 {
    2_000
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 0,
            base_delay_ms: default_base_delay(),
            max_delay_ms: default_max_delay(),
        }
    }
}

pub const MAX_RETRIES: u32 = 5;

impl RetryPolicy {
    pub fn validate(self) -> Result<Self, ConfigError> {
        if self.max_retries > MAX_RETRIES {
            return Err(ConfigError::invalid(
                "retry.max_retries",
                format!("must be 0 to {MAX_RETRIES}"),
            ));
        }
        if !(1..=60_000).contains(&self.base_delay_ms) {
            return Err(ConfigError::invalid(
                "retry.base_delay_ms",
                "must be 1 to 60000",
            ));
        }
        if !(self.base_delay_ms..=60_000).contains(&self.max_delay_ms) {
            return Err(ConfigError::invalid(
                "retry.max_delay_ms",
                "must be base_delay_ms to 60000",
            ));
        }
        Ok(self)
    }
}

/// A rate-limit signal read besides `Retry-After` (which is always read).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RateLimitSignal {
    /// OpenAI's `x-ratelimit-reset-{requests,tokens}` durations (`20s`, `1m30s`, `6ms`).
    #[serde(rename = "x-ratelimit-reset")]
    XRatelimitReset,
    /// Anthropic's `anthropic-ratelimit-*-reset` RFC 3339 times.
    #[serde(rename = "anthropic-ratelimit")]
    AnthropicRatelimit,
    /// A 200 whose JSON body is a rate-limit error object counts as a 429.
    #[serde(rename = "rate_limited_200")]
    RateLimited200,
}

/// The opt-ins as a provider row stores them (flattened into the provider spec).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resilience {
    #[serde(default)]
    pub retry: RetryPolicy,
    #[serde(default)]
    pub rate_limit_signals: Vec<RateLimitSignal>,
    /// How long a key refused with 401/403 is parked; 0 (the default) parks nothing.
    #[serde(default)]
    pub auth_cooldown_ms: u64,
    /// Requests per minute this tenant may start on this provider; `None` is unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
    /// The longest a park of this provider's keys lasts, in place of the deployment's
    /// `MAX_PARK_MS` (a weekly quota's `Retry-After: 500000` is honoured only above it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_park_ms: Option<u64>,
    /// How long a 429 carrying no hint the gateway reads parks its key; absent, the kind's rule
    /// stays (nothing, or `CLOUD_THROTTLE_PARK_MS` for a cloud kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_cooldown_ms: Option<u64>,
}

/// The range of `max_park_ms` and `rate_limit_cooldown_ms`: 1 s to 7 days.
pub const PARK_MS_RANGE: std::ops::RangeInclusive<u64> = 1_000..=604_800_000;

impl Resilience {
    pub fn reads(&self, signal: RateLimitSignal) -> bool {
        self.rate_limit_signals.contains(&signal)
    }

    /// The longest a park of this provider's keys lasts: its own `max_park_ms`, else the
    /// deployment's `MAX_PARK_MS`.
    pub fn max_park_ms(&self, deployment_ms: u64) -> u64 {
        self.max_park_ms.unwrap_or(deployment_ms)
    }

    /// Validates the admin's values, naming the field that is wrong; `parks` is
    /// (`max_park_ms`, `rate_limit_cooldown_ms`).
    pub fn validate(
        retry: Option<RetryPolicy>,
        mut rate_limit_signals: Vec<RateLimitSignal>,
        auth_cooldown_ms: Option<u64>,
        rpm: Option<u32>,
        (max_park_ms, rate_limit_cooldown_ms): (Option<u64>, Option<u64>),
    ) -> Result<Self, ConfigError> {
        let retry = retry.unwrap_or_default().validate()?;
        super::sort::sort(&mut rate_limit_signals);
        rate_limit_signals.dedup();
        let auth_cooldown_ms = auth_cooldown_ms.unwrap_or(0);
        if auth_cooldown_ms > 86_400_000 {
            return Err(ConfigError::invalid(
                "auth_cooldown_ms",
                "must be 0 to 86400000",
            ));
        }
        if rpm.is_some_and(|r| r == 0 || r > 1_000_000) {
            return Err(ConfigError::invalid("rpm", "must be 1 to 1000000"));
        }
        for (field, ms) in [
            ("max_park_ms", max_park_ms),
            ("rate_limit_cooldown_ms", rate_limit_cooldown_ms),
        ] {
            if ms.is_some_and(|ms| !PARK_MS_RANGE.contains(&ms)) {
                return Err(ConfigError::invalid(
                    field,
                    "must be 1000 to 604800000 (1 s to 7 days)",
                ));
            }
        }
        Ok(Self {
            retry,
            rate_limit_signals,
            auth_cooldown_ms,
            rpm,
            max_park_ms,
            rate_limit_cooldown_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_seed_000_no_retry_no_signal_no_bench_no_rate() {
        let r: Resilience = serde_json::from_str("{}").unwrap();
        assert_eq!(r, Resilience::default());
        assert_eq!(r.retry.max_retries, 0);
        assert!(r.rate_limit_signals.is_empty());
        assert_eq!(r.auth_cooldown_ms, 0);
        assert_eq!(r.rpm, None);
    }

    #[test]
    fn a_provider_row_stored_before_issue_17_still_loads_with_the_defaults() {
        let row = r#"{"name":"p","kind":"openai","base_url":"https://x/v1",
            "keys":[{"id":"key_1","secret_name":"PROVIDER_X"}],
            "key_strategy":"failover","timeout_ms":30000}"#;
        let p: crate::config::StoredProvider = serde_json::from_str(row).unwrap();
        assert_eq!(p.resilience, Resilience::default());
        let again = serde_json::to_string(&p).unwrap();
        let back: crate::config::StoredProvider = serde_json::from_str(&again).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn bad_values_name_their_field() {
        let field =
            |r: Result<Resilience, ConfigError>| r.err().and_then(|e| e.field().map(str::to_owned));
        let retry = |max, base, cap| {
            Some(RetryPolicy {
                max_retries: max,
                base_delay_ms: base,
                max_delay_ms: cap,
            })
        };
        assert_eq!(
            field(Resilience::validate(
                retry(6, 100, 2000),
                vec![],
                None,
                None,
                P
            ))
            .as_deref(),
            Some("retry.max_retries")
        );
        assert_eq!(
            field(Resilience::validate(
                retry(1, 0, 2000),
                vec![],
                None,
                None,
                P
            ))
            .as_deref(),
            Some("retry.base_delay_ms")
        );
        assert_eq!(
            field(Resilience::validate(
                retry(1, 500, 100),
                vec![],
                None,
                None,
                P
            ))
            .as_deref(),
            Some("retry.max_delay_ms")
        );
        assert_eq!(
            field(Resilience::validate(None, vec![], None, Some(0), P)).as_deref(),
            Some("rpm")
        );
        assert_eq!(
            field(Resilience::validate(None, vec![], Some(u64::MAX), None, P)).as_deref(),
            Some("auth_cooldown_ms")
        );
    }

    const P: (Option<u64>, Option<u64>) = (None, None);

    #[test]
    fn max_park_ms_and_rate_limit_cooldown_ms_are_1_s_to_7_days() {
        let parks = |max, cooldown| {
            Resilience::validate(None, vec![], None, None, (max, cooldown))
                .map_err(|e| e.field().map(str::to_owned))
        };
        assert_eq!(
            parks(Some(999), None).err(),
            Some(Some("max_park_ms".into()))
        );
        assert_eq!(
            parks(None, Some(604_800_001)).err(),
            Some(Some("rate_limit_cooldown_ms".into()))
        );
        let r = parks(Some(604_800_000), Some(1_000)).unwrap();
        assert_eq!(r.max_park_ms(3_600_000), 604_800_000);
        assert_eq!(r.rate_limit_cooldown_ms, Some(1_000));
        let unset = parks(None, None).unwrap();
        assert_eq!(
            unset.max_park_ms(3_600_000),
            3_600_000,
            "the deployment's cap"
        );
    }

    #[test]
    fn signals_are_named_as_the_issue_spells_them() {
        let s: Vec<RateLimitSignal> = serde_json::from_str(
            r#"["x-ratelimit-reset","anthropic-ratelimit","rate_limited_200"]"#,
        )
        .unwrap();
        assert_eq!(s.len(), 3);
        assert!(serde_json::from_str::<Vec<RateLimitSignal>>(r#"["nope"]"#).is_err());
    }
}
