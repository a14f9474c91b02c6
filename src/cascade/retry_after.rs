//! `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date in any of the three forms of
//! §5.6.7 (IMF-fixdate, obsolete RFC 850, asctime). The window is read from the header and nothing
//! else: an unparsable value or a date already past parks nothing.

use std::time::{Duration, UNIX_EPOCH};

/// How long to park, in ms, given the header value and the current epoch time in ms.
pub fn park_ms(value: &str, now_ms: u64) -> Option<u64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Saturate absurdly long delays instead of refusing them: the provider said "not soon".
        let secs: u64 = value.parse().unwrap_or(u64::MAX);
        return Some(secs.saturating_mul(1000)).filter(|ms| *ms > 0);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let at_ms = at.duration_since(UNIX_EPOCH).ok()?.as_millis();
    let delay = at_ms.checked_sub(u128::from(now_ms))?;
    u64::try_from(delay).ok().filter(|ms| *ms > 0)
}

/// The park window a 429 earns: what the header asks for, never more than `max_ms`
/// (`MAX_PARK_MS`). A provider's "come back in a century" must not shut a key out for longer
/// than an operator would wait; after the window the key is simply tried again.
pub fn park_window(value: &str, now_ms: u64, max_ms: u64) -> Option<u64> {
    park_ms(value, now_ms).map(|ms| ms.min(max_ms))
}

/// Epoch ms of `Sun, 06 Nov 1994 08:49:37 GMT`, the RFC's own example date.
#[cfg(test)]
const RFC_EXAMPLE_MS: u64 = 784_111_777_000;

/// Formats epoch ms as an IMF-fixdate, for tests and logs.
pub fn imf_fixdate(epoch_ms: u64) -> String {
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_millis(epoch_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_seconds_parks_exactly_that_long() {
        assert_eq!(park_ms("120", 5), Some(120_000));
        assert_eq!(park_ms(" 7 ", 5), Some(7_000));
    }

    #[test]
    fn zero_seconds_parks_nothing() {
        assert_eq!(park_ms("0", 5), None);
    }

    #[test]
    fn imf_fixdate_is_understood() {
        let now = RFC_EXAMPLE_MS - 30_000;
        assert_eq!(park_ms("Sun, 06 Nov 1994 08:49:37 GMT", now), Some(30_000));
    }

    #[test]
    fn obsolete_rfc850_date_is_understood() {
        let now = RFC_EXAMPLE_MS - 2_000;
        assert_eq!(park_ms("Sunday, 06-Nov-94 08:49:37 GMT", now), Some(2_000));
    }

    #[test]
    fn asctime_date_is_understood() {
        let now = RFC_EXAMPLE_MS - 1_000;
        assert_eq!(park_ms("Sun Nov  6 08:49:37 1994", now), Some(1_000));
    }

    #[test]
    fn date_in_the_past_parks_nothing() {
        assert_eq!(
            park_ms("Sun, 06 Nov 1994 08:49:37 GMT", RFC_EXAMPLE_MS + 1),
            None
        );
        assert_eq!(
            park_ms("Sun, 06 Nov 1994 08:49:37 GMT", RFC_EXAMPLE_MS),
            None
        );
    }

    #[test]
    fn unparsable_values_park_nothing() {
        for v in [
            "",
            "soon",
            "-5",
            "1.5",
            "12abc",
            "Sun, 32 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(park_ms(v, 0), None, "{v:?}");
        }
    }

    #[test]
    fn huge_delay_saturates_instead_of_overflowing() {
        assert_eq!(park_ms("99999999999999999999999", 0), Some(u64::MAX));
    }

    #[test]
    fn a_century_long_retry_after_parks_for_max_park_ms_only() {
        assert_eq!(park_window("3153600000", 0, 3_600_000), Some(3_600_000));
        assert_eq!(
            park_window("99999999999999999999999", 0, 3_600_000),
            Some(3_600_000)
        );
        let now = 1_800_000_000_000;
        assert_eq!(
            park_window(&imf_fixdate(now + 86_400_000), now, 3_600_000),
            Some(3_600_000)
        );
    }

    #[test]
    fn a_window_inside_max_park_ms_is_kept_as_asked_and_none_stays_none() {
        assert_eq!(park_window("120", 0, 3_600_000), Some(120_000));
        assert_eq!(park_window("0", 0, 3_600_000), None);
        assert_eq!(park_window("soon", 0, 3_600_000), None);
    }

    #[test]
    fn formatted_date_parses_back() {
        let now = 1_800_000_000_000;
        assert_eq!(park_ms(&imf_fixdate(now + 45_000), now), Some(45_000));
    }
}
