//! Budget periods as UTC windows computed from epoch milliseconds: a spend counter belongs to
//! the window that contains the moment it was spent in, and a new window starts from zero.

use serde::{Deserialize, Serialize};

const DAY_MS: u64 = 86_400_000;

/// How long a budget's spend accumulates before it starts again.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    /// The UTC calendar day.
    Day,
    /// The UTC calendar month.
    Month,
    /// All time: never starts again.
    Total,
}

impl Period {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Month => "month",
            Self::Total => "total",
        }
    }

    /// The first millisecond of the window containing `now_ms` (0 for `Total`).
    pub fn start_ms(self, now_ms: u64) -> u64 {
        match self {
            Self::Day => now_ms - now_ms % DAY_MS,
            Self::Month => {
                let (y, m, _) = civil_from_days(now_ms / DAY_MS);
                days_from_civil(y, m, 1) * DAY_MS
            }
            Self::Total => 0,
        }
    }
}

/// Days since 1970-01-01 → (year, month 1-12, day 1-31), proleptic Gregorian (H. Hinnant's
/// `civil_from_days`, restricted to dates from 1970 on).
pub fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// (year ≥ 1970, month 1-12, day) → days since 1970-01-01.
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD` of the UTC day containing `ms` (the usage API's `day` groups).
pub fn utc_date(ms: u64) -> String {
    let (y, m, d) = civil_from_days(ms / DAY_MS);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2024-02-29T13:45:00Z, a leap day.
    const LEAP_DAY: u64 = 1_709_214_300_000;

    #[test]
    fn a_day_budget_window_starts_at_utc_midnight() {
        assert_eq!(Period::Day.start_ms(LEAP_DAY), 1_709_164_800_000);
        assert_eq!(utc_date(Period::Day.start_ms(LEAP_DAY)), "2024-02-29");
        assert_eq!(Period::Day.start_ms(1_709_164_800_000), 1_709_164_800_000);
    }

    #[test]
    fn a_month_budget_window_starts_on_the_first_of_the_utc_calendar_month() {
        // 2024-02-01T00:00:00Z
        assert_eq!(Period::Month.start_ms(LEAP_DAY), 1_706_745_600_000);
        // The last millisecond of February is still February; the next is March.
        assert_eq!(Period::Month.start_ms(1_709_251_199_999), 1_706_745_600_000);
        assert_eq!(Period::Month.start_ms(1_709_251_200_000), 1_709_251_200_000);
        assert_eq!(utc_date(1_709_251_200_000), "2024-03-01");
    }

    #[test]
    fn a_total_budget_never_starts_again() {
        assert_eq!(Period::Total.start_ms(LEAP_DAY), 0);
    }

    #[test]
    fn calendar_arithmetic_round_trips_every_day_for_two_centuries() {
        for days in 0..73_000 {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400_000), "2000-02-29");
    }
}
