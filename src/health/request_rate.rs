//! `rpm`: how many requests one tenant may start on one provider in any minute. The
//! routing object counts admissions in a sliding one-minute window and refuses past the limit.

use std::collections::VecDeque;

pub const MINUTE_MS: u64 = 60_000;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestRate {
    /// Epoch ms of the admissions inside the last minute, oldest first.
    admitted: VecDeque<u64>,
}

impl RequestRate {
    /// `Some(until)` when `rpm` admissions were already made inside the minute before `now`:
    /// the next one may start at `until`, when the oldest of them leaves the window.
    pub fn full_until(&mut self, rpm: u32, now: u64) -> Option<u64> {
        while self
            .admitted
            .front()
            .is_some_and(|t| now.saturating_sub(*t) >= MINUTE_MS)
        {
            self.admitted.pop_front();
        }
        let rpm = usize::try_from(rpm).unwrap_or(usize::MAX);
        if self.admitted.len() < rpm {
            return None;
        }
        let oldest = self.admitted.len() - rpm;
        self.admitted
            .get(oldest)
            .map(|t| t.saturating_add(MINUTE_MS))
    }

    /// Admissions inside the minute before `now`, without forgetting older ones.
    pub fn in_minute(&self, now: u64) -> usize {
        self.admitted
            .iter()
            .filter(|t| now.saturating_sub(**t) < MINUTE_MS)
            .count()
    }

    pub fn admit(&mut self, now: u64) {
        self.admitted.push_back(now);
    }

    /// The admissions on record, oldest first (a routing snapshot carries them: `explain`).
    pub fn times(&self) -> Vec<u64> {
        self.admitted.iter().copied().collect()
    }

    /// The rate as a snapshot carried it.
    pub fn from_times(times: Vec<u64>) -> Self {
        Self {
            admitted: times.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpm_2_refuses_the_third_request_inside_a_minute_until_the_first_leaves_it() {
        let mut r = RequestRate::default();
        for t in [0, 10] {
            assert_eq!(r.full_until(2, t), None);
            r.admit(t);
        }
        assert_eq!(r.full_until(2, 20), Some(60_000));
        assert_eq!(r.full_until(2, 59_999), Some(60_000));
        assert_eq!(r.full_until(2, 60_000), None);
    }
}
