use super::*;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn a_callers_traceparent_is_joined_with_its_span_as_parent_and_its_tracestate_passed_on() {
    let c = TraceContext::begin(Some(PARENT), Some("vendor=abc"), "req_1", 0.0);
    assert_eq!(hex::encode(c.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(
        c.parent.map(hex::encode).as_deref(),
        Some("00f067aa0ba902b7")
    );
    assert!(c.sampled, "a sampled parent is exported whatever the ratio");
    assert_eq!(c.tracestate.as_deref(), Some("vendor=abc"));
    let up = c.upstream_traceparent(0);
    assert!(
        up.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"),
        "{up}"
    );
    assert_eq!(&up[36..52], hex::encode(c.span_id(1)));
    assert!(up.ends_with("-01"));
}

#[test]
fn sampling_is_parent_based_an_unsampled_parent_is_not_exported_whatever_the_ratio() {
    let unsampled = PARENT.replace("-01", "-00");
    let c = TraceContext::begin(Some(&unsampled), None, "req_1", 1.0);
    assert!(!c.sampled);
    assert!(c.upstream_traceparent(2).ends_with("-00"));
}

#[test]
fn without_a_parent_sample_ratio_decides_by_the_trace_id() {
    assert!(TraceContext::begin(None, None, "req_1", 1.0).sampled);
    assert!(!TraceContext::begin(None, None, "req_1", 0.0).sampled);
    let kept = (0..2000)
        .filter(|i| TraceContext::begin(None, None, &format!("req_{i}"), 0.25).sampled)
        .count();
    assert!((400..600).contains(&kept), "{kept} of 2000 at 0.25");
    let c = TraceContext::begin(None, Some("vendor=abc"), "req_1", 1.0);
    assert_eq!(c.parent, None);
    assert_eq!(
        c.tracestate, None,
        "a tracestate without its traceparent is not ours to pass"
    );
}

#[test]
fn a_malformed_traceparent_starts_a_new_trace() {
    for bad in [
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        "",
    ] {
        assert_eq!(parse_traceparent(bad), None, "{bad}");
    }
    let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes";
    assert!(
        parse_traceparent(later).is_some(),
        "a later version's extra fields are ignored"
    );
}

#[test]
fn span_ids_differ_per_call_and_per_request_and_are_stable() {
    let a = TraceContext::begin(Some(PARENT), None, "req_a", 1.0);
    let b = TraceContext::begin(Some(PARENT), None, "req_b", 1.0);
    assert_ne!(a.span_id(0), a.span_id(1));
    assert_ne!(a.span_id(1), b.span_id(1));
    assert_eq!(a.span_id(3), a.clone().span_id(3));
}
