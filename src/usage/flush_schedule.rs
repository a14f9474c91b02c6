//! When the ledger flushes its roll-ups to D1: a small state machine over the object's one alarm.
//! Each transition takes the time and answers the alarm to set, if any. A flush that fails
//! retries with capped exponential backoff, and new roll-ups arriving meanwhile never replace a
//! scheduled alarm (neither a retry nor an earlier flush) with a later or sooner one.

/// Roll-ups wait at most this long for their flush once the first of them arrives: with the
/// isolates' one-second batching, a served request is in the usage API within about 3 s.
pub const FLUSH_AFTER_MS: u64 = 2_000;
/// More than a full batch still pending after a flush: the next one follows soon.
pub const BACKLOG_FLUSH_AFTER_MS: u64 = 250;
/// The first retry after a failed flush; each further failure doubles it, up to the cap.
pub const RETRY_BASE_MS: u64 = 2_000;
pub const RETRY_CAP_MS: u64 = 60_000;

/// How long to wait after the `failures`-th failure in a row (1 → 2 s, 2 → 4 s, … ≤ 60 s).
pub fn retry_delay_ms(failures: u32) -> u64 {
    let doublings = failures.saturating_sub(1).min(16);
    RETRY_BASE_MS
        .saturating_mul(1u64 << doublings)
        .min(RETRY_CAP_MS)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushSchedule {
    /// Nothing pending and no alarm.
    Idle,
    /// The alarm is set for `at_ms`; `failures` flushes in a row failed before it.
    Scheduled { at_ms: u64, failures: u32 },
    /// The alarm is running a flush.
    Flushing { failures: u32 },
}

/// Set the object's alarm to this time (epoch ms).
pub type SetAlarm = Option<u64>;

impl FlushSchedule {
    /// The schedule of an object that has just started: the alarm storage still holds, and the
    /// failure count it stored. Without an alarm it is idle; `pending` then schedules one.
    pub fn restore(alarm_at_ms: Option<u64>, failures: u32) -> Self {
        match alarm_at_ms {
            Some(at_ms) => Self::Scheduled { at_ms, failures },
            None => Self::Idle,
        }
    }

    pub fn failures(self) -> u32 {
        match self {
            Self::Idle => 0,
            Self::Scheduled { failures, .. } | Self::Flushing { failures } => failures,
        }
    }

    /// Roll-ups are pending. Only an idle schedule sets an alarm: a scheduled one (a retry
    /// included) or a running flush already covers them.
    pub fn pending(self, now_ms: u64) -> (Self, SetAlarm) {
        match self {
            Self::Idle => {
                let at_ms = now_ms.saturating_add(FLUSH_AFTER_MS);
                (Self::Scheduled { at_ms, failures: 0 }, Some(at_ms))
            }
            other => (other, None),
        }
    }

    /// The alarm fired.
    pub fn alarm_fired(self) -> Self {
        Self::Flushing {
            failures: self.failures(),
        }
    }

    /// The flush succeeded; `remaining_rows` are still pending, `batch_rows` fit one flush.
    pub fn flushed(
        self,
        now_ms: u64,
        remaining_rows: usize,
        batch_rows: usize,
    ) -> (Self, SetAlarm) {
        if remaining_rows == 0 {
            return (Self::Idle, None);
        }
        let after = if remaining_rows >= batch_rows {
            BACKLOG_FLUSH_AFTER_MS
        } else {
            FLUSH_AFTER_MS
        };
        let at_ms = now_ms.saturating_add(after);
        (Self::Scheduled { at_ms, failures: 0 }, Some(at_ms))
    }

    /// The flush failed: everything stays pending and the next try waits longer.
    pub fn failed(self, now_ms: u64) -> (Self, SetAlarm) {
        let failures = self.failures().saturating_add(1);
        let at_ms = now_ms.saturating_add(retry_delay_ms(failures));
        (Self::Scheduled { at_ms, failures }, Some(at_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::FlushSchedule::*;
    use super::*;

    #[test]
    fn the_first_pending_roll_up_schedules_a_flush_and_later_ones_do_not_move_it() {
        let (s, alarm) = Idle.pending(1_000);
        assert_eq!(alarm, Some(3_000));
        let (s2, alarm) = s.pending(2_500);
        assert_eq!((s2, alarm), (s, None));
    }

    #[test]
    fn a_failed_flush_retries_with_exponential_backoff_capped_at_a_minute() {
        let delays: Vec<u64> = (1..=8).map(retry_delay_ms).collect();
        assert_eq!(
            delays,
            [2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]
        );
        assert_eq!(retry_delay_ms(u32::MAX), RETRY_CAP_MS);
        let mut s = Idle.pending(0).0;
        let mut now = 0;
        for expected in [2_000, 4_000, 8_000] {
            s = s.alarm_fired();
            let (next, alarm) = s.failed(now);
            assert_eq!(alarm, Some(now + expected));
            s = next;
            now += expected;
        }
        assert_eq!(s.failures(), 3);
    }

    #[test]
    fn a_settle_arriving_during_a_retry_wait_does_not_override_it_with_a_2_s_alarm() {
        let (s, _) = Idle.pending(0).0.alarm_fired().failed(2_000);
        let (s, _) = s.alarm_fired().failed(4_000);
        assert_eq!(
            s,
            Scheduled {
                at_ms: 8_000,
                failures: 2
            }
        );
        let (after, alarm) = s.pending(4_100);
        assert_eq!((after, alarm), (s, None));
    }

    #[test]
    fn a_settle_during_a_running_flush_sets_no_alarm_the_flush_reschedules() {
        let s = Idle.pending(0).0.alarm_fired();
        assert_eq!(s.pending(2_100), (s, None));
        let (s, alarm) = s.flushed(2_200, 3, 500);
        assert_eq!(alarm, Some(4_200));
        assert_eq!(s.failures(), 0);
    }

    #[test]
    fn a_success_resets_the_backoff_and_a_backlog_flushes_soon() {
        let s = Idle.pending(0).0.alarm_fired().failed(2_000).0;
        let (s, alarm) = s.alarm_fired().flushed(4_000, 1_200, 500);
        assert_eq!(alarm, Some(4_000 + BACKLOG_FLUSH_AFTER_MS));
        let (s, alarm) = s.alarm_fired().flushed(4_250, 0, 500);
        assert_eq!((s, alarm), (Idle, None));
    }

    #[test]
    fn an_object_restarted_keeps_its_retry_and_its_failure_count() {
        let s = FlushSchedule::restore(Some(9_000), 4);
        assert_eq!(s.pending(8_000), (s, None));
        let (_, alarm) = s.alarm_fired().failed(9_000);
        assert_eq!(alarm, Some(9_000 + retry_delay_ms(5)));
        assert_eq!(FlushSchedule::restore(None, 4).pending(0).1, Some(2_000));
    }
}
