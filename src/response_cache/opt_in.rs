//! Whether a request uses the response cache, and for how long: a pure decision over
//! the three levels and the request's headers.
//!
//! - Levels: the tenant's `cache.ttl_s`, the requested name's `cache_ttl_s` (its matched rule,
//!   else its alias), the request's `X-CogniGate-Cache-Ttl`. The most specific level that is set
//!   wins (request, then name, then tenant), and 0 means off.
//! - Every level's TTL is capped at the tenant's `max_ttl_s` (default 86,400); a `max_ttl_s` of
//!   0 is the tenant's no: off for every caller, whatever its headers ask.
//! - `X-CogniGate-Cache: off` bypasses both the lookup and the write, whatever the levels say.
//! - A bad header value is an error naming the header; nothing is looked up or changed.

use crate::config::response_cache::{CacheSettings, MAX_CACHE_TTL_S};

pub const MODE_HEADER: &str = "X-CogniGate-Cache";
pub const TTL_HEADER: &str = "X-CogniGate-Cache-Ttl";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    /// No level opts in: nothing is hashed or looked up, and no `X-CogniGate-Cache` header.
    Off,
    /// `X-CogniGate-Cache: off`: neither looked up nor written (`X-CogniGate-Cache: bypass`).
    Bypass,
    /// Looked up, and a 200 answer stored for this many seconds.
    Use { ttl_s: u32 },
}

/// A header value the gateway cannot read: the header and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCacheHeader {
    pub header: &'static str,
    pub reason: String,
}

/// What the request's levels and headers decide.
pub fn decide(
    tenant: Option<&CacheSettings>,
    name_ttl_s: Option<u32>,
    mode_header: Option<&str>,
    ttl_header: Option<&str>,
) -> Result<CacheUse, BadCacheHeader> {
    let bypass = match mode_header.map(str::trim) {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("off") => true,
        Some(v) => {
            return Err(BadCacheHeader {
                header: MODE_HEADER,
                reason: format!("'{}' is not a value it takes: only 'off'", short(v)),
            })
        }
    };
    let requested = match ttl_header.map(str::trim) {
        None => None,
        Some(v) => Some(
            v.parse::<u32>()
                .ok()
                .filter(|s| *s <= MAX_CACHE_TTL_S && v.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| BadCacheHeader {
                    header: TTL_HEADER,
                    reason: format!(
                        "'{}' is not a whole number of seconds from 0 to {MAX_CACHE_TTL_S}",
                        short(v)
                    ),
                })?,
        ),
    };
    if tenant.is_some_and(CacheSettings::forbids) {
        return Ok(CacheUse::Off);
    }
    if bypass {
        return Ok(CacheUse::Bypass);
    }
    let chosen = requested
        .or(name_ttl_s)
        .or_else(|| tenant.and_then(|t| t.ttl_s));
    let max = tenant.map_or(
        crate::config::response_cache::DEFAULT_MAX_TTL_S,
        CacheSettings::max_ttl_s,
    );
    Ok(match chosen.map(|t| t.min(max)) {
        None | Some(0) => CacheUse::Off,
        Some(ttl_s) => CacheUse::Use { ttl_s },
    })
}

/// A header value quoted in an error, cut so a huge one does not fill the message.
fn short(v: &str) -> &str {
    crate::config::text::truncated(v, 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(ttl_s: Option<u32>, max_ttl_s: Option<u32>) -> CacheSettings {
        CacheSettings { ttl_s, max_ttl_s }
    }

    #[test]
    fn no_level_opting_in_is_off() {
        assert_eq!(decide(None, None, None, None), Ok(CacheUse::Off));
        assert_eq!(
            decide(Some(&tenant(None, Some(60))), None, None, None),
            Ok(CacheUse::Off)
        );
    }

    #[test]
    fn the_most_specific_level_wins_and_0_means_off() {
        let t = tenant(Some(100), None);
        assert_eq!(
            decide(Some(&t), None, None, None),
            Ok(CacheUse::Use { ttl_s: 100 })
        );
        assert_eq!(
            decide(Some(&t), Some(50), None, None),
            Ok(CacheUse::Use { ttl_s: 50 })
        );
        assert_eq!(
            decide(Some(&t), Some(50), None, Some("20")),
            Ok(CacheUse::Use { ttl_s: 20 })
        );
        assert_eq!(decide(Some(&t), Some(0), None, None), Ok(CacheUse::Off));
        assert_eq!(
            decide(Some(&t), Some(0), None, Some("30")),
            Ok(CacheUse::Use { ttl_s: 30 })
        );
        assert_eq!(
            decide(Some(&t), Some(50), None, Some("0")),
            Ok(CacheUse::Off)
        );
        assert_eq!(
            decide(None, None, None, Some("30")),
            Ok(CacheUse::Use { ttl_s: 30 })
        );
    }

    #[test]
    fn every_level_is_capped_at_max_ttl_s_default_a_day() {
        assert_eq!(
            decide(None, None, None, Some("999999")),
            Ok(CacheUse::Use { ttl_s: 86_400 })
        );
        let t = tenant(None, Some(60));
        assert_eq!(
            decide(Some(&t), Some(600), None, None),
            Ok(CacheUse::Use { ttl_s: 60 })
        );
        assert_eq!(
            decide(Some(&t), None, None, Some("3600")),
            Ok(CacheUse::Use { ttl_s: 60 })
        );
    }

    #[test]
    fn a_tenant_max_ttl_s_of_0_is_off_for_every_caller_whatever_its_headers_ask() {
        let no = tenant(None, Some(0));
        for (name, mode, ttl) in [
            (None, None, Some("60")),
            (Some(600), None, None),
            (Some(600), None, Some("86400")),
            (None, Some("off"), Some("60")),
        ] {
            assert_eq!(
                decide(Some(&no), name, mode, ttl),
                Ok(CacheUse::Off),
                "{name:?} {mode:?} {ttl:?}"
            );
        }
        let e = decide(Some(&no), None, None, Some("soon")).err();
        assert_eq!(
            e.map(|e| e.header),
            Some(TTL_HEADER),
            "a bad value is still named"
        );
    }

    #[test]
    fn cache_off_bypasses_whatever_the_levels_say() {
        let t = tenant(Some(100), None);
        assert_eq!(
            decide(Some(&t), Some(5), Some("OFF"), Some("10")),
            Ok(CacheUse::Bypass)
        );
        assert_eq!(
            decide(None, None, Some(" off "), None),
            Ok(CacheUse::Bypass)
        );
    }

    #[test]
    fn bad_header_values_name_the_header() {
        for v in ["-1", "1.5", "soon", "", "+5", "99999999999"] {
            let e = decide(None, None, None, Some(v)).err();
            assert_eq!(e.map(|e| e.header), Some(TTL_HEADER), "{v}");
        }
        let e = decide(None, None, Some("on"), None).err();
        assert_eq!(e.map(|e| e.header), Some(MODE_HEADER));
    }
}
