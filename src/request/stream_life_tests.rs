//! A served stream's life: what each ending owes, once, and when its one record goes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::stream_life::{bill, late_bill, Bill, Life};
use crate::cascade::OwedReport;
use crate::config::admin_body::{parse_body, ModelBody};
use crate::config::{
    BreakerSettings, CatalogModel, ModelId, OpenDurations, ProviderName, TenantId,
};
use crate::health::{Park, ReportRequest, Verdict};
use crate::stream::StreamEnd;
use crate::usage::{PendingUsage, TokenCounts, UsageSource};

fn owed_report(probe: Option<u64>) -> OwedReport {
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

fn pending() -> PendingUsage {
    PendingUsage {
        request_id: "req_1".into(),
        tenant: TenantId::parse("acme").unwrap(),
        key_id: "key_1".into(),
        end_user: None,
        requested: "m".into(),
        generation: 1,
    }
}

fn model() -> CatalogModel {
    let body = r#"{"provider":"p","context_window":8000,"input_price_per_mtok":1}"#;
    let m: ModelBody = parse_body(body.as_bytes()).unwrap();
    m.validate(ModelId::parse("m").unwrap()).unwrap()
}

const REPORTED: (TokenCounts, UsageSource) = (TokenCounts::new(10, 4, 0), UsageSource::Reported);
const ESTIMATED: (TokenCounts, UsageSource) = (TokenCounts::new(10, 2, 0), UsageSource::Estimated);

#[test]
fn a_stream_ends_once_whichever_way_it_ends() {
    let mut life = Life::default();
    let owed = life.end(&StreamEnd::Completed, owed_report(None), (100, 350));
    let owed = owed.unwrap();
    assert_eq!(owed.finished_ms, Some(250));
    assert!(owed.store_copy && !owed.abort_upstream);
    assert_eq!(owed.report.unwrap().verdict, Verdict::Success);
    assert_eq!(life, Life::Ended);
    let again = life.end(
        &StreamEnd::Failed("late".into()),
        owed_report(None),
        (100, 400),
    );
    assert_eq!(again, None);
    assert_eq!(
        life.abandon(owed_report(None)),
        None,
        "ended: the caller leaving owes nothing"
    );
}

#[test]
fn a_stream_that_failed_after_its_first_byte_aborts_the_upstream_and_stores_nothing() {
    let mut life = Life::default();
    let end = StreamEnd::Failed("reset".into());
    let owed = life.end(&end, owed_report(None), (0, 10)).unwrap();
    assert!(owed.abort_upstream);
    assert!(!owed.store_copy);
    assert_eq!(owed.finished_ms, None);
    assert_eq!(owed.failed.as_deref(), Some("reset"));
    let verdict = owed.report.unwrap().verdict;
    let server = Verdict::Failure {
        reason: "server".into(),
    };
    assert_eq!(verdict, server);
}

#[test]
fn a_caller_who_goes_away_cancels_the_upstream_and_nothing_counts_against_the_model() {
    let mut life = Life::default();
    let owed = life.abandon(owed_report(None)).unwrap();
    assert!(owed.abort_upstream);
    assert_eq!(owed.report, None, "outside a probe nothing is sent");
    assert_eq!(life, Life::Abandoned);
    assert_eq!(
        life.end(&StreamEnd::Completed, owed_report(None), (0, 1)),
        None
    );
    let mut probe = Life::default();
    let report = probe.abandon(owed_report(Some(7))).unwrap().report.unwrap();
    assert_eq!(
        report.verdict,
        Verdict::Neutral,
        "a cancelled probe proved nothing"
    );
    assert!(report.parks.is_empty());
}

#[test]
fn an_ended_stream_is_billed_at_once_reported_or_estimated() {
    for usage in [REPORTED, ESTIMATED] {
        let Bill::Now(record) = bill(Life::Ended, &pending(), &model(), usage, 5) else {
            panic!("an ended stream's record goes now");
        };
        assert_eq!(record.tokens, Some(usage.0));
    }
}

#[test]
fn a_caller_gone_before_the_usage_event_waits_for_a_late_read_with_the_estimate_ready() {
    let Bill::AfterLateRead(estimate) = bill(Life::Relaying, &pending(), &model(), ESTIMATED, 5)
    else {
        panic!("the estimate waits for a late read");
    };
    assert_eq!(estimate.usage_source, UsageSource::Estimated);
    let reported = bill(Life::Relaying, &pending(), &model(), REPORTED, 5);
    assert!(
        matches!(reported, Bill::Now(_)),
        "usage already read: billed now"
    );
}

#[test]
fn a_late_read_replaces_the_estimate_only_with_the_providers_own_usage() {
    let Bill::AfterLateRead(estimate) = bill(Life::Relaying, &pending(), &model(), ESTIMATED, 5)
    else {
        panic!("late read");
    };
    let found = late_bill(&pending(), &model(), &estimate, REPORTED).unwrap();
    assert_eq!(found.tokens, Some(REPORTED.0));
    assert_eq!(found.at_ms, estimate.at_ms, "the record keeps its time");
    assert_eq!(late_bill(&pending(), &model(), &estimate, ESTIMATED), None);
}
