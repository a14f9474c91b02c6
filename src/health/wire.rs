//! Reading a report as the routing object receives it. The breaker news in a report (its verdict
//! and probe) must never be lost because of a park it carries: parks are read one by one, an
//! oversized window saturates at the largest safe time, and a park that cannot be read at all is
//! dropped with a reason the object logs, while the rest of the report still applies.

use super::provider_state::{Park, ReportRequest};
use super::MAX_SAFE_MS;
use crate::config::KeyId;
use serde_json::Value;

/// A report as read, with what had to be set aside or adjusted to read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadReport {
    pub report: ReportRequest,
    /// One line per park that was dropped or saturated; logged by the object.
    pub problems: Vec<String>,
}

/// Reads a `/report` body. `Err` (with its reason) only when the part that carries the breaker
/// news itself (model, verdict, probe, breaker settings) is unreadable.
pub fn read_report(body: &str) -> Result<ReadReport, String> {
    let mut value: Value =
        serde_json::from_str(body).map_err(|e| format!("report is not JSON: {e}"))?;
    let raw_parks = match value.as_object_mut() {
        Some(obj) => obj.remove("parks"),
        None => return Err("report is not a JSON object".to_owned()),
    };
    let mut report: ReportRequest =
        serde_json::from_value(value).map_err(|e| format!("report unreadable: {e}"))?;
    let mut problems = Vec::new();
    match raw_parks {
        None | Some(Value::Null) => {}
        Some(Value::Array(parks)) => {
            for (i, raw) in parks.iter().enumerate() {
                match read_park(raw) {
                    Ok((park, note)) => {
                        problems.extend(note.map(|n| format!("park {i}: {n}")));
                        report.parks.push(park);
                    }
                    Err(why) => problems.push(format!("park {i} dropped: {why}")),
                }
            }
        }
        Some(_) => problems.push("parks dropped: not a list".to_owned()),
    }
    Ok(ReadReport { report, problems })
}

fn read_park(raw: &Value) -> Result<(Park, Option<String>), String> {
    let key = raw
        .get("key")
        .and_then(Value::as_str)
        .ok_or("no key id")?
        .to_owned();
    let until = raw.get("until").ok_or("no until")?;
    let (until, note) = match until.as_u64() {
        Some(t) if t <= MAX_SAFE_MS => (t, None),
        Some(t) => (MAX_SAFE_MS, Some(format!("until {t} saturated"))),
        // A float (serde_json reads integers past u64 as floats) or a negative number.
        None => match until.as_f64() {
            Some(f) if f.is_finite() && f >= 0.0 => {
                (MAX_SAFE_MS, Some(format!("until {f} saturated")))
            }
            _ => return Err(format!("until {until} is not a time")),
        },
    };
    Ok((
        Park {
            key: KeyId::new(key),
            until,
        },
        note,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::Verdict;

    const FAILURE: &str = r#""verdict": {"verdict": "failure", "reason": "server"}, "probe": 3,
        "breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": 60000}"#;

    fn body(parks: &str) -> String {
        format!(r#"{{"model": "m", "parks": {parks}, {FAILURE}}}"#)
    }

    #[test]
    fn a_park_past_two_to_the_53_saturates_and_the_breaker_news_still_applies() {
        let read = read_report(&body(r#"[{"key": "k1", "until": 9007199254740993}]"#)).unwrap();
        assert_eq!(
            read.report.parks,
            [Park {
                key: "k1".into(),
                until: MAX_SAFE_MS
            }]
        );
        assert_eq!(read.problems.len(), 1, "the saturation is logged");
        assert!(matches!(read.report.verdict, Verdict::Failure { .. }));
        assert_eq!(read.report.probe, Some(3));
    }

    #[test]
    fn a_park_past_u64_or_written_as_a_float_saturates_too() {
        let read = read_report(&body(
            r#"[{"key": "k1", "until": 1e30}, {"key": "k2", "until": 123456789012345678901234}]"#,
        ))
        .unwrap();
        assert!(read.report.parks.iter().all(|p| p.until == MAX_SAFE_MS));
        assert_eq!(read.problems.len(), 2);
    }

    #[test]
    fn an_unreadable_park_is_dropped_with_its_reason_and_the_verdict_kept() {
        let read = read_report(&body(
            r#"[{"key": "k1", "until": -5}, {"until": 5}, {"key": "k3", "until": 7}]"#,
        ))
        .unwrap();
        assert_eq!(
            read.report.parks,
            [Park {
                key: "k3".into(),
                until: 7
            }]
        );
        assert_eq!(read.problems.len(), 2, "{:?}", read.problems);
        assert!(read.problems[0].contains("park 0 dropped"));
        assert!(matches!(read.report.verdict, Verdict::Failure { .. }));
    }

    #[test]
    fn parks_that_are_not_a_list_are_dropped_and_the_verdict_kept() {
        let read = read_report(&body(r#""soon""#)).unwrap();
        assert!(read.report.parks.is_empty());
        assert_eq!(read.problems, ["parks dropped: not a list"]);
    }

    #[test]
    fn a_report_without_parks_reads_as_before() {
        let read = read_report(&format!(r#"{{"model": "m", {FAILURE}}}"#)).unwrap();
        assert!(read.report.parks.is_empty() && read.problems.is_empty());
    }

    #[test]
    fn an_unreadable_verdict_is_an_error_with_its_reason() {
        let err = read_report(r#"{"model": "m", "verdict": {"verdict": "maybe"}}"#).unwrap_err();
        assert!(err.starts_with("report unreadable"), "{err}");
        assert!(read_report("[1]").is_err());
        assert!(read_report("{").is_err());
    }
}
