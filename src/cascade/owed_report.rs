//! The report still owed for the candidate that served, and how a stream's end decides it: the
//! edge only moves bytes and timers, and hands the end it saw to these rules.

use super::Failure;
use crate::config::ProviderName;
use crate::health::{ReportRequest, Verdict};
use crate::stream::StreamEnd;

/// Non-streamed answers settle it at once, streamed ones when the stream ends (a failure after
/// the first byte still counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwedReport {
    pub provider: ProviderName,
    pub report: ReportRequest,
}

impl OwedReport {
    /// The report once the stream ended: one that failed after its first byte is the candidate's
    /// `server` failure, whatever it had been settled as when it started.
    pub fn after_stream(self, end: &StreamEnd) -> ReportRequest {
        let mut report = self.report;
        if let StreamEnd::Failed(_) = end {
            report.verdict = Verdict::Failure {
                reason: Failure::Server.as_str().to_owned(),
            };
        }
        report
    }

    /// The report when the caller went away before the end: a cancelled probe proved nothing, so
    /// it is freed at once and nothing else counts against the key or the model; outside a probe
    /// there is nothing to send.
    pub fn after_cancel(self) -> Option<ReportRequest> {
        let mut report = self.report;
        report.probe?;
        report.verdict = Verdict::Neutral;
        report.parks.clear();
        Some(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BreakerSettings, OpenDurations};
    use crate::health::Park;

    fn settled(probe: Option<u64>) -> OwedReport {
        OwedReport {
            provider: ProviderName::parse("p").unwrap(),
            report: ReportRequest {
                model: "m".into(),
                parks: vec![Park {
                    key: "k".into(),
                    until: 9,
                }],
                verdict: Verdict::Success,
                probe,
                breaker: BreakerSettings {
                    error_threshold: 5,
                    window_ms: 30_000,
                    open_duration_ms: 60_000,
                    open_durations_ms: OpenDurations::SINGLE,
                },
                scheduled: None,
            },
        }
    }

    #[test]
    fn a_stream_that_failed_after_its_first_byte_is_the_candidates_server_failure() {
        let r = settled(None).after_stream(&StreamEnd::Failed("reset".into()));
        assert_eq!(
            r.verdict,
            Verdict::Failure {
                reason: "server".into()
            }
        );
        let r = settled(None).after_stream(&StreamEnd::Completed);
        assert_eq!(r.verdict, Verdict::Success);
    }

    #[test]
    fn a_cancelled_probe_is_freed_and_nothing_counts_and_outside_a_probe_nothing_is_sent() {
        let r = settled(Some(7)).after_cancel().unwrap();
        assert_eq!(
            (r.verdict, r.parks.len(), r.probe),
            (Verdict::Neutral, 0, Some(7))
        );
        assert_eq!(settled(None).after_cancel(), None);
    }
}
