//! Whose silence ends a stream. A stream's pump waits on one side at a time: on the upstream
//! (a read is pending) or on the caller (a write is pending: the caller has not taken the last
//! bytes). Each wait may last the idle window; what ends it decides who the end belongs to.
//!
//! The rule: only the upstream's silence is the provider's. An upstream that gave nothing for the
//! window while a read was pending timed out, and that is counted against it. A caller who did
//! not pull for the window (backpressure from its side) cancelled: the stream ends as the
//! caller's cancel, which never counts toward the provider's breaker. The time spent waiting on
//! the caller is never counted as the upstream's: the upstream's window starts when the read is
//! asked for.

/// The side a stream's pump is waiting on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Awaiting {
    /// A read of the upstream body is pending.
    Upstream,
    /// A write to the caller is pending.
    Caller,
}

/// How a stream ended on silence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuietEnd {
    /// No chunk within the window while a read was pending: the provider timed out.
    UpstreamTimedOut { window_ms: u64 },
    /// The caller took no bytes within the window: a client cancel.
    CallerStalled,
}

impl QuietEnd {
    /// The failure this end settles the stream with (counted against the provider); `None` for
    /// the caller's stall, which leaves the stream unsettled, as a caller who went away does.
    pub fn provider_failure(&self) -> Option<String> {
        match self {
            Self::UpstreamTimedOut { window_ms } => Some(format!("no chunk within {window_ms} ms")),
            Self::CallerStalled => None,
        }
    }
}

/// What the idle timer finds when it fires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdleCheck {
    /// The side waited on still has this long (ms) left.
    Wait(u64),
    /// The side waited on used up the window.
    Quiet(QuietEnd),
}

/// The side a pump waits on and since when (the edge starts the upstream's wait when it asks for
/// a read, the caller's when it hands over a write); time is passed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleWatch {
    window_ms: u64,
    awaiting: Awaiting,
    since_ms: u64,
}

impl IdleWatch {
    /// A pump waiting on `awaiting` since `since_ms`, with `window_ms` for the wait.
    pub fn new(window_ms: u64, awaiting: Awaiting, since_ms: u64) -> Self {
        Self {
            window_ms: window_ms.max(1),
            awaiting,
            since_ms,
        }
    }

    /// The timer fired at `now_ms`.
    pub fn check(&self, now_ms: u64) -> IdleCheck {
        let waited = now_ms.saturating_sub(self.since_ms);
        if waited < self.window_ms {
            return IdleCheck::Wait(self.window_ms - waited);
        }
        IdleCheck::Quiet(match self.awaiting {
            Awaiting::Upstream => QuietEnd::UpstreamTimedOut {
                window_ms: self.window_ms,
            },
            Awaiting::Caller => QuietEnd::CallerStalled,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(w: IdleWatch, now_ms: u64) -> QuietEnd {
        match w.check(now_ms) {
            IdleCheck::Quiet(end) => end,
            IdleCheck::Wait(ms) => panic!("still {ms} ms to wait"),
        }
    }

    #[test]
    fn an_upstream_quiet_for_the_window_while_a_read_is_pending_is_the_providers_timeout() {
        let w = IdleWatch::new(1_000, Awaiting::Upstream, 500);
        assert_eq!(w.check(600), IdleCheck::Wait(900));
        assert_eq!(w.check(1_499), IdleCheck::Wait(1));
        let end = quiet(w, 1_500);
        assert_eq!(end, QuietEnd::UpstreamTimedOut { window_ms: 1_000 });
        assert_eq!(
            end.provider_failure().as_deref(),
            Some("no chunk within 1000 ms")
        );
    }

    #[test]
    fn a_slow_reader_is_a_client_cancel_not_a_breaker_failure() {
        // A chunk handed to the caller at 0, which the caller had not taken when the window ended.
        let w = IdleWatch::new(1_000, Awaiting::Caller, 0);
        assert_eq!(w.check(999), IdleCheck::Wait(1));
        let end = quiet(w, 5_000);
        assert_eq!(end, QuietEnd::CallerStalled);
        assert_eq!(
            end.provider_failure(),
            None,
            "nothing counts against the provider"
        );
    }

    #[test]
    fn time_spent_waiting_on_the_caller_is_never_the_upstreams() {
        // The upstream's last chunk came at 0; the caller took it at 900, when the next read was
        // asked for: the upstream has its whole window from then.
        let w = IdleWatch::new(1_000, Awaiting::Upstream, 900);
        assert_eq!(w.check(1_500), IdleCheck::Wait(400));
        assert_eq!(
            quiet(w, 1_900),
            QuietEnd::UpstreamTimedOut { window_ms: 1_000 }
        );
    }

    #[test]
    fn a_clock_that_goes_back_waits_the_whole_window_and_a_zero_window_is_one_ms() {
        let w = IdleWatch::new(1_000, Awaiting::Caller, 5_000);
        assert_eq!(w.check(4_000), IdleCheck::Wait(1_000));
        let w = IdleWatch::new(0, Awaiting::Upstream, 0);
        assert_eq!(w.check(0), IdleCheck::Wait(1));
    }
}
