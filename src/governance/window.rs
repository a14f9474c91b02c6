//! The rolling minute behind `rpm` and `tpm`: sixty one-second buckets. Sliding, not fixed: a
//! fixed minute lets a caller send twice its limit across a boundary (the end of one minute and
//! the start of the next), while a log of every request costs memory per request. Buckets cost
//! at most sixty counters per scope and make `Retry-After` exact to the second.

use std::collections::VecDeque;

const SPAN_SECS: u64 = 60;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MinuteWindow {
    /// (second since the epoch, count), oldest first, only seconds inside the last minute.
    buckets: VecDeque<(u64, u64)>,
}

impl MinuteWindow {
    /// Forgets seconds that have left the minute ending at `now_ms`.
    fn expire(&mut self, now_ms: u64) {
        let now_sec = now_ms / 1000;
        while let Some(&(sec, _)) = self.buckets.front() {
            if sec + SPAN_SECS > now_sec {
                break;
            }
            self.buckets.pop_front();
        }
    }

    /// What was counted in the last minute.
    pub fn total(&mut self, now_ms: u64) -> u64 {
        self.expire(now_ms);
        self.buckets
            .iter()
            .fold(0u64, |sum, (_, n)| sum.saturating_add(*n))
    }

    pub fn add(&mut self, now_ms: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.expire(now_ms);
        let sec = now_ms / 1000;
        match self.buckets.back_mut() {
            Some((last, count)) if *last >= sec => *count = count.saturating_add(n),
            _ => self.buckets.push_back((sec, n)),
        }
    }

    pub fn is_idle(&mut self, now_ms: u64) -> bool {
        self.expire(now_ms);
        self.buckets.is_empty()
    }

    /// Whole seconds, at least 1, until what was counted in the last minute is below `limit`
    /// again: the oldest seconds leave the window one by one until enough has left.
    pub fn retry_after_secs(&mut self, now_ms: u64, limit: u64) -> u64 {
        let mut total = self.total(now_ms);
        for &(sec, n) in &self.buckets {
            if total < limit {
                break;
            }
            total = total.saturating_sub(n);
            if total < limit {
                let frees_at = (sec + SPAN_SECS) * 1000;
                return frees_at.saturating_sub(now_ms).div_ceil(1000).max(1);
            }
        }
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_700_000_000_000;

    #[test]
    fn counts_leave_the_window_sixty_seconds_after_their_second() {
        let mut w = MinuteWindow::default();
        w.add(T0 + 100, 1);
        w.add(T0 + 900, 2);
        w.add(T0 + 30_000, 4);
        assert_eq!(w.total(T0 + 59_999), 7);
        assert_eq!(w.total(T0 + 60_000), 4);
        assert_eq!(w.total(T0 + 90_000), 0);
        assert!(w.is_idle(T0 + 90_000));
    }

    #[test]
    fn a_sliding_minute_allows_no_double_burst_across_a_boundary() {
        // A fixed minute would admit 2 at 59.9 s and 2 more at 60.1 s.
        let mut w = MinuteWindow::default();
        w.add(T0 + 59_900, 2);
        assert_eq!(w.total(T0 + 60_100), 2);
    }

    #[test]
    fn retry_after_is_the_whole_seconds_until_enough_capacity_frees() {
        let mut w = MinuteWindow::default();
        w.add(T0 + 1_000, 1);
        w.add(T0 + 2_000, 1);
        // Two of two used at 10.5 s; the first frees at 61 s: 50.5 s, rounded up.
        assert_eq!(w.retry_after_secs(T0 + 10_500, 2), 51);
        // Needing both gone (a limit of 1 with 2 counted) waits for the second one.
        assert_eq!(w.retry_after_secs(T0 + 10_500, 1), 52);
    }

    #[test]
    fn retry_after_is_at_least_one_second() {
        let mut w = MinuteWindow::default();
        w.add(T0, 5);
        assert_eq!(w.retry_after_secs(T0 + 59_999, 5), 1);
        assert_eq!(MinuteWindow::default().retry_after_secs(T0, 0), 1);
    }
}
