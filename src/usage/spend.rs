//! Money spent by one scope (a caller key, an end user, the tenant), in every period at once: a
//! budget's period can change after the fact, and the admin list shows the spend of whichever
//! period the budget names now.

use crate::config::period::Period;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
struct Windowed {
    start_ms: u64,
    usd: f64,
}

impl Windowed {
    fn in_window(&self, period: Period, now_ms: u64) -> f64 {
        if self.start_ms == period.start_ms(now_ms) {
            self.usd
        } else {
            0.0
        }
    }

    fn add(&mut self, period: Period, now_ms: u64, usd: f64) {
        let start = period.start_ms(now_ms);
        if start < self.start_ms {
            // Spent in a window that has already ended: it belongs to no current budget.
            return;
        }
        if start > self.start_ms {
            *self = Self {
                start_ms: start,
                usd: 0.0,
            };
        }
        self.usd += usd;
    }
}

/// Stored as it is: the one durable part of a scope's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    day: Windowed,
    month: Windowed,
    total: f64,
}

impl Spend {
    /// Adds a cost spent at `now_ms`. A negative or non-finite cost adds nothing (costs are
    /// computed from validated prices; this keeps a bad record from un-spending a budget).
    pub fn add(&mut self, now_ms: u64, usd: f64) {
        if !usd.is_finite() || usd <= 0.0 {
            return;
        }
        self.day.add(Period::Day, now_ms, usd);
        self.month.add(Period::Month, now_ms, usd);
        self.total += usd;
    }

    /// What was spent in the window of `period` that contains `now_ms`.
    pub fn in_period(&self, period: Period, now_ms: u64) -> f64 {
        match period {
            Period::Day => self.day.in_window(period, now_ms),
            Period::Month => self.month.in_window(period, now_ms),
            Period::Total => self.total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2024-01-31T23:00:00Z
    const JAN_31: u64 = 1_706_742_000_000;
    const HOUR: u64 = 3_600_000;

    #[test]
    fn each_period_starts_again_from_zero_in_its_next_window() {
        let mut s = Spend::default();
        s.add(JAN_31, 1.0);
        assert_eq!(s.in_period(Period::Day, JAN_31 + HOUR / 2), 1.0);
        // 2024-02-01T00:30Z: a new day and a new month, the same all time.
        let feb_1 = JAN_31 + HOUR + HOUR / 2;
        assert_eq!(s.in_period(Period::Day, feb_1), 0.0);
        assert_eq!(s.in_period(Period::Month, feb_1), 0.0);
        assert_eq!(s.in_period(Period::Total, feb_1), 1.0);
        s.add(feb_1, 0.25);
        assert_eq!(s.in_period(Period::Day, feb_1), 0.25);
        assert_eq!(s.in_period(Period::Total, feb_1), 1.25);
    }

    #[test]
    fn spend_from_an_ended_window_does_not_reset_the_current_one() {
        let mut s = Spend::default();
        s.add(JAN_31, 1.0);
        s.add(JAN_31 - 86_400_000, 4.0);
        assert_eq!(s.in_period(Period::Day, JAN_31), 1.0);
        assert_eq!(s.in_period(Period::Total, JAN_31), 5.0);
    }

    #[test]
    fn a_negative_or_unknown_cost_spends_nothing() {
        let mut s = Spend::default();
        s.add(JAN_31, -3.0);
        s.add(JAN_31, f64::NAN);
        assert_eq!(s, Spend::default());
    }
}
