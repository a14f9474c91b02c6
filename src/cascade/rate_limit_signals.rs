//! Rate-limit signals besides `Retry-After`, each opt-in per provider through
//! `rate_limit_signals`. The spec's rule stays the default: with no signal listed, a 429 without
//! `Retry-After` parks nothing. `Retry-After`, when present, always wins; every park obeys
//! `MAX_PARK_MS` (`park_window`'s clamp).

use super::retry_after::park_window;
use crate::config::{RateLimitSignal, Resilience};
use serde::Deserialize;

/// The response headers a signal may read: `x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset`
/// and `retry-after-ms`, and the quota headers headroom is read from (`quota_headers`).
/// The edge keeps only these (names lowercased), so nothing else of a response is held.
/// The signal headers of an answer's headers as one text (`api::header_lines`), read in one
/// crossing of the runtime's boundary rather than one per header.
pub fn signal_pairs(lines: &str) -> Vec<(String, String)> {
    crate::api::header_lines::pairs(lines)
        .filter(|(name, _)| is_signal_header(name))
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect()
}

/// An answer's `Retry-After` and signal headers, from its headers as one text.
pub fn of_answer(lines: &str) -> (Option<String>, Vec<(String, String)>) {
    let retry_after = crate::api::header_lines::find(lines, "retry-after").map(str::to_owned);
    (retry_after, signal_pairs(lines))
}

pub fn is_signal_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    if super::quota_headers::is_quota_header(&name) {
        return true;
    }
    // Azure OpenAI's millisecond `Retry-After`, and the error type Bedrock names its errors by
    // (`platform_status`).
    name == "retry-after-ms"
        || name == "x-amzn-errortype"
        || name.starts_with("x-ratelimit-reset-")
        || (name.starts_with("anthropic-ratelimit-") && name.ends_with("-reset"))
}

const X_RESET: [&str; 2] = ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"];
const ANTHROPIC_RESET: [&str; 4] = [
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-reset",
];

/// How long a rate-limited key is parked, in ms: `Retry-After` if it says, else the later of the
/// reset headers of every signal the provider reads; never more than `max_ms`.
pub fn park_for(
    resilience: &Resilience,
    retry_after: Option<&str>,
    headers: &[(String, String)],
    now_ms: u64,
    max_ms: u64,
) -> Option<u64> {
    if let Some(ms) = retry_after.and_then(|v| park_window(v, now_ms, max_ms)) {
        return Some(ms);
    }
    let value = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let mut longest: Option<u64> = None;
    if resilience.reads(RateLimitSignal::XRatelimitReset) {
        for ms in X_RESET
            .iter()
            .filter_map(|h| value(h))
            .filter_map(duration_ms)
        {
            longest = longest.max(Some(ms));
        }
    }
    if resilience.reads(RateLimitSignal::AnthropicRatelimit) {
        let ends = ANTHROPIC_RESET.iter().filter_map(|h| value(h));
        for at in ends.filter_map(rfc3339_ms) {
            longest = longest.max(at.checked_sub(now_ms));
        }
    }
    longest.filter(|ms| *ms > 0).map(|ms| ms.min(max_ms))
}

/// A Go-style duration as OpenAI sends it: `20s`, `1m30s`, `6ms`, `1h2m3.5s`, `0.5s`.
pub fn duration_ms(text: &str) -> Option<u64> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3_600_000.0,
            "m" => 60_000.0,
            "s" => 1_000.0,
            "ms" => 1.0,
            "us" | "µs" => 0.001,
            "ns" => 0.000_001,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += number * scale;
    }
    // Round up: parking a hair too long beats knocking again just before the reset.
    (total.is_finite() && total >= 0.0).then(|| total.ceil().min(u64::MAX as f64) as u64)
}

/// An RFC 3339 time (`2026-11-30T03:00:05Z`, `…05.250+01:00`) as epoch ms.
pub fn rfc3339_ms(text: &str) -> Option<u64> {
    let t = text.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = std::str::from_utf8(t.get(r)?).ok()?;
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let seps = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if seps.iter().any(|(i, c)| t.get(*i) != Some(c))
        || !matches!(t.get(10), Some(b'T' | b't' | b' '))
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || min > 59
        || sec > 60
    {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if t.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while t.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let frac = std::str::from_utf8(t.get(start..i)?).ok()?;
        let padded = format!("{frac:0<3}");
        millis = padded.get(..3)?.parse().ok()?;
    }
    let offset_s = match t.get(i)? {
        b'Z' | b'z' if i + 1 == t.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == t.len() && t.get(i + 3) == Some(&b':') => {
            let off = num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60;
            if *sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset_s;
    u64::try_from(secs.checked_mul(1000)?.checked_add(millis)?).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[derive(Deserialize)]
struct ErrorEnvelope {
    error: ErrorObject,
}

#[derive(Deserialize)]
struct ErrorObject {
    #[serde(default, rename = "type")]
    kind: Option<serde_json::Value>,
    #[serde(default)]
    code: Option<serde_json::Value>,
}

/// `rate_limited_200`: whether a 2xx body is an error object of a rate-limit type or code
/// (`{"error": {"type": "rate_limit_error"}}`, `{"error": {"code": "rate_limit_exceeded"}}`,
/// `{"error": {"code": 429}}`). Only `error.type` and `error.code` are kept while reading.
pub fn is_rate_limited_body(bytes: &[u8]) -> bool {
    let Ok(env) = serde_json::from_slice::<ErrorEnvelope>(bytes) else {
        return false;
    };
    [env.error.kind, env.error.code]
        .iter()
        .flatten()
        .any(|v| match v {
            serde_json::Value::String(s) => {
                let s = s.to_ascii_lowercase();
                s.contains("rate_limit") || s.contains("ratelimit") || s == "too_many_requests"
            }
            serde_json::Value::Number(n) => n.as_u64() == Some(429),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(signals: &[RateLimitSignal]) -> Resilience {
        Resilience {
            rate_limit_signals: signals.to_vec(),
            ..Resilience::default()
        }
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    const MAX: u64 = 3_600_000;

    #[test]
    fn go_durations_as_openai_sends_them() {
        assert_eq!(duration_ms("20s"), Some(20_000));
        assert_eq!(duration_ms("1m30s"), Some(90_000));
        assert_eq!(duration_ms("6ms"), Some(6));
        assert_eq!(duration_ms("1h2m3.5s"), Some(3_723_500));
        assert_eq!(duration_ms("0.25s"), Some(250));
        for bad in ["", "soon", "20", "5x", "-1s", "s"] {
            assert_eq!(duration_ms(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn rfc3339_times_as_anthropic_sends_them() {
        assert_eq!(rfc3339_ms("1970-01-01T00:00:01Z"), Some(1_000));
        assert_eq!(
            rfc3339_ms("2026-11-30T03:00:05.250Z"),
            Some(1_796_007_605_250)
        );
        assert_eq!(
            rfc3339_ms("2026-11-30T04:00:05+01:00"),
            Some(1_796_007_605_000)
        );
        for bad in [
            "",
            "2026-11-30",
            "2026-13-30T00:00:00Z",
            "2026-11-30T03:00:05",
        ] {
            assert_eq!(rfc3339_ms(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn without_the_signal_a_429_with_only_reset_headers_parks_nothing_as_in_seed_000() {
        let headers = h(&[("x-ratelimit-reset-requests", "2s")]);
        assert_eq!(park_for(&reading(&[]), None, &headers, 0, MAX), None);
    }

    #[test]
    fn x_ratelimit_reset_parks_until_the_later_of_requests_and_tokens() {
        let r = reading(&[RateLimitSignal::XRatelimitReset]);
        let headers = h(&[
            ("x-ratelimit-reset-requests", "2s"),
            ("X-RateLimit-Reset-Tokens", "1m30s"),
        ]);
        assert_eq!(park_for(&r, None, &headers, 0, MAX), Some(90_000));
        assert_eq!(
            park_for(&r, None, &headers, 0, 10_000),
            Some(10_000),
            "clamped"
        );
        assert_eq!(
            park_for(&r, Some("7"), &headers, 0, MAX),
            Some(7_000),
            "Retry-After wins"
        );
    }

    #[test]
    fn anthropic_ratelimit_parks_until_the_latest_reset_time() {
        let r = reading(&[RateLimitSignal::AnthropicRatelimit]);
        let now = 1_796_007_600_000; // 2026-11-30T03:00:00Z
        let headers = h(&[
            ("anthropic-ratelimit-requests-reset", "2026-11-30T03:00:05Z"),
            (
                "anthropic-ratelimit-output-tokens-reset",
                "2026-11-30T03:00:09Z",
            ),
            ("anthropic-ratelimit-tokens-reset", "2026-11-30T02:00:00Z"),
        ]);
        assert_eq!(park_for(&r, None, &headers, now, MAX), Some(9_000));
        let x_only = reading(&[RateLimitSignal::XRatelimitReset]);
        assert_eq!(park_for(&x_only, None, &headers, now, MAX), None);
    }

    #[test]
    fn only_reset_and_quota_headers_are_kept_by_the_edge() {
        assert!(is_signal_header("X-RateLimit-Reset-Requests"));
        assert!(is_signal_header("anthropic-ratelimit-input-tokens-reset"));
        assert!(is_signal_header("anthropic-ratelimit-tokens-remaining"));
        assert!(is_signal_header("X-RateLimit-Remaining"));
        assert!(!is_signal_header("authorization"));
        assert!(!is_signal_header("content-type"));
    }

    #[test]
    fn a_rate_limit_shaped_200_body_is_recognised_and_an_answer_is_not() {
        assert!(is_rate_limited_body(
            br#"{"error":{"message":"slow","type":"rate_limit_error"}}"#
        ));
        assert!(is_rate_limited_body(
            br#"{"error":{"code":"rate_limit_exceeded","type":"requests"}}"#
        ));
        assert!(is_rate_limited_body(br#"{"error":{"code":429}}"#));
        assert!(!is_rate_limited_body(
            br#"{"error":{"type":"server_error"}}"#
        ));
        assert!(!is_rate_limited_body(
            br#"{"id":"x","choices":[{"message":{"content":"rate_limit"}}]}"#
        ));
        assert!(!is_rate_limited_body(b"not json"));
    }

    #[test]
    fn an_answers_signals_are_read_from_its_headers_as_one_text() {
        let lines = "content-type\napplication/json\nretry-after\n7\nx-ratelimit-reset-requests\n1s\nx-amzn-errortype\nThrottlingException\n";
        let (retry_after, kept) = of_answer(lines);
        assert_eq!(retry_after.as_deref(), Some("7"));
        let names: Vec<&str> = kept.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x-ratelimit-reset-requests", "x-amzn-errortype"]);
        assert_eq!(of_answer("").0, None);
    }
}
