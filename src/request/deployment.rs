//! Deployment-wide settings read from `[vars]` (the edge reads them once per isolate: they
//! cannot change under it). A missing var keeps its default; a malformed one is an error naming
//! the var, so a misconfigured deployment fails loudly instead of serving with surprises.

use crate::config::Defaults;

#[derive(Debug, Clone)]
pub struct Deployment {
    pub defaults: Defaults,
    pub max_chat_body: usize,
    pub max_admin_body: usize,
    /// `MAX_CHAT_JSON_VALUES`: a chat body with more JSON values is refused before parsing.
    pub max_chat_json_values: usize,
    /// Adds `X-CogniGate-D1-Queries` / `-DO-Calls` to responses (tests and benchmarks).
    pub debug_counters: bool,
    /// `ROUTING_LEASE_MS`: how long an admission grant or skip lasts; 0 asks the routing object
    /// about every candidate (the strict mode).
    pub lease_ms: u64,
    /// `ALLOW_HTTP_UPSTREAMS = "true"`: providers may be called over plain http (local vLLM or
    /// Ollama, the tests). Off by default, so provider keys only travel over TLS.
    pub allow_http_upstreams: bool,
    /// `ROUTING_RTT_MS` (benchmarks only): every routing-object call waits this long first, to
    /// show what a production round trip to an object in another location costs.
    pub routing_rtt_ms: u64,
    /// `MAX_PARK_MS`: the longest a `Retry-After` parks a key.
    pub max_park_ms: u64,
    /// `LIVE_STATS_FLUSH_MS`: how long an isolate's outcomes wait before a timed flush sends them
    /// to the routing object (when no acquire or report carried them first).
    pub stats_flush_ms: u64,
}

/// Grants by default: chosen with `bench/capacity.py` (a hot tenant/provider at 10,000 req/s
/// over 1,000 isolates keeps its routing object under 1,000 req/s) and `make bench`.
pub const DEFAULT_LEASE_MS: u64 = 1_500;

/// `MAX_PARK_MS` unless set: an hour.
pub const DEFAULT_MAX_PARK_MS: u64 = 3_600_000;

/// `ALLOW_HTTP_UPSTREAMS = "true"`: the local-development switch (plain http, and webhooks on
/// local or private hosts). Anything else, or nothing, keeps it off.
pub fn allows_http(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim() == "true")
}

impl Deployment {
    /// Reads every var through `lookup`; `stats_flush_ms` is `LIVE_STATS_FLUSH_MS`'s default
    /// (the live-stats flush's own).
    pub fn from_vars(
        lookup: impl Fn(&str) -> Option<String>,
        stats_flush_ms: u64,
    ) -> Result<Self, String> {
        let size = |name: &str, default: usize| match lookup(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("var {name} must be a positive integer")),
        };
        let whole_ms = |name: &str, default: u64| match lookup(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| format!("var {name} must be a whole number of ms")),
        };
        Ok(Self {
            defaults: Defaults::from_vars(&lookup)?,
            max_chat_body: size("MAX_CHAT_BODY_BYTES", 10 * 1024 * 1024)?,
            max_admin_body: size("MAX_ADMIN_BODY_BYTES", 64 * 1024)?,
            max_chat_json_values: size(
                "MAX_CHAT_JSON_VALUES",
                crate::api::chat::DEFAULT_MAX_JSON_VALUES,
            )?,
            debug_counters: lookup("DEBUG_COUNTERS").is_some_and(|v| v == "true" || v == "1"),
            allow_http_upstreams: allows_http(
                lookup(crate::config::base_url::ALLOW_HTTP_VAR).as_deref(),
            ),
            lease_ms: whole_ms("ROUTING_LEASE_MS", DEFAULT_LEASE_MS)?,
            routing_rtt_ms: whole_ms("ROUTING_RTT_MS", 0)?,
            stats_flush_ms: whole_ms("LIVE_STATS_FLUSH_MS", stats_flush_ms)?,
            max_park_ms: match lookup("MAX_PARK_MS") {
                None => DEFAULT_MAX_PARK_MS,
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|ms| (1..=crate::health::MAX_SAFE_MS).contains(ms))
                    .ok_or("var MAX_PARK_MS must be a positive whole number of ms")?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<Deployment, String> {
        let lookup = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        };
        Deployment::from_vars(lookup, 2_000)
    }

    #[test]
    fn a_deployment_without_vars_takes_every_default() {
        let d = read(&[]).unwrap();
        assert_eq!(d.max_chat_body, 10 * 1024 * 1024);
        assert_eq!(d.max_admin_body, 64 * 1024);
        assert_eq!(d.lease_ms, DEFAULT_LEASE_MS);
        assert_eq!(d.routing_rtt_ms, 0);
        assert_eq!(d.stats_flush_ms, 2_000);
        assert_eq!(d.max_park_ms, DEFAULT_MAX_PARK_MS);
        assert!(!d.debug_counters && !d.allow_http_upstreams);
    }

    #[test]
    fn a_size_var_must_be_a_positive_integer_and_names_itself() {
        for bad in ["0", "-1", "ten"] {
            let err = read(&[("MAX_ADMIN_BODY_BYTES", bad)]).unwrap_err();
            assert!(err.contains("MAX_ADMIN_BODY_BYTES"), "{err}");
        }
        assert_eq!(
            read(&[("MAX_CHAT_BODY_BYTES", " 2048 ")])
                .unwrap()
                .max_chat_body,
            2048
        );
    }

    #[test]
    fn a_lease_of_zero_ms_is_the_strict_mode_and_a_fraction_is_refused() {
        assert_eq!(read(&[("ROUTING_LEASE_MS", "0")]).unwrap().lease_ms, 0);
        let err = read(&[("ROUTING_LEASE_MS", "1.5")]).unwrap_err();
        assert!(err.contains("ROUTING_LEASE_MS"), "{err}");
    }

    #[test]
    fn max_park_ms_must_lie_between_one_ms_and_the_safe_maximum() {
        assert!(read(&[("MAX_PARK_MS", "0")]).is_err());
        let past = (crate::health::MAX_SAFE_MS + 1).to_string();
        assert!(read(&[("MAX_PARK_MS", &past)]).is_err());
        assert_eq!(read(&[("MAX_PARK_MS", "5")]).unwrap().max_park_ms, 5);
    }

    #[test]
    fn plain_http_is_allowed_only_by_the_exact_word_true() {
        assert!(allows_http(Some(" true ")));
        for off in [None, Some("1"), Some("TRUE"), Some("yes")] {
            assert!(!allows_http(off), "{off:?}");
        }
        let on = read(&[("ALLOW_HTTP_UPSTREAMS", "true")]).unwrap();
        assert!(on.allow_http_upstreams);
    }

    #[test]
    fn debug_counters_take_true_or_1() {
        assert!(read(&[("DEBUG_COUNTERS", "1")]).unwrap().debug_counters);
        assert!(read(&[("DEBUG_COUNTERS", "true")]).unwrap().debug_counters);
        assert!(!read(&[("DEBUG_COUNTERS", "yes")]).unwrap().debug_counters);
    }

    #[test]
    fn a_bad_defaults_var_fails_the_deployment() {
        assert!(read(&[("REQUEST_BUDGET_MS", "0")]).is_err());
    }
}
