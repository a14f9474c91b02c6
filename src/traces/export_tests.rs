use super::*;
use crate::config::otel::OtelProtocol;
use crate::traces::span::{SpanKind, SpanStatus};
use std::cell::RefCell;

fn export() -> OtelExport {
    OtelExport {
        endpoint: "https://o.example/v1/traces".into(),
        protocol: OtelProtocol::HttpJson,
        headers: Vec::new(),
        sample_ratio: 1.0,
        capture_content: false,
    }
}

fn spans(n: usize) -> Vec<Span> {
    (0..n)
        .map(|i| Span {
            trace_id: [1; 16],
            span_id: [(i % 250) as u8 + 1; 8],
            parent_span_id: None,
            trace_state: None,
            name: format!("chat m{i}"),
            kind: SpanKind::Server,
            start_ns: 1,
            end_ns: 2,
            attributes: Vec::new(),
            status: SpanStatus::Unset,
        })
        .collect()
}

fn tenant(name: &str) -> TenantId {
    TenantId::parse(name).unwrap()
}

#[test]
fn one_delivery_per_tenant_runs_at_a_time_and_takes_what_came_meanwhile() {
    let mut x = Exports::default();
    let t = tenant("acme");
    assert!(x.add(&t, &export(), spans(2)).deliver);
    assert!(
        !x.add(&t, &export(), spans(3)).deliver,
        "the running delivery takes these"
    );
    assert!(
        x.add(&tenant("other"), &export(), spans(1)).deliver,
        "tenants never share one"
    );
    assert_eq!(x.next_batch(&t).map(|b| b.spans.len()), Some(5));
    assert!(
        x.next_batch(&t).is_none(),
        "nothing left: the delivery ends"
    );
    assert!(
        x.add(&t, &export(), spans(1)).deliver,
        "and the next spans start another"
    );
}

#[test]
fn batches_hold_at_most_max_batch_and_waiting_spans_past_max_waiting_are_dropped_and_counted() {
    let mut x = Exports::default();
    let t = tenant("acme");
    let added = x.add(&t, &export(), spans(MAX_WAITING + 10));
    assert_eq!(added.dropped, 10);
    let mut total = 0;
    while let Some(b) = x.next_batch(&t) {
        assert!(b.spans.len() <= MAX_BATCH);
        total += b.spans.len();
    }
    assert_eq!(total, MAX_WAITING);
}

#[test]
fn a_connection_error_is_retried_once_and_a_refusal_or_second_failure_drops_the_batch() {
    assert_eq!(after(Sent::Taken, false), After::Next);
    assert_eq!(after(Sent::Unreached, false), After::Retry);
    assert_eq!(after(Sent::Unreached, true), After::Drop);
    assert_eq!(after(Sent::Refused(503), false), After::Drop);
    assert_eq!(after(Sent::Refused(400), false), After::Drop);
}

#[test]
fn an_abandoned_delivery_lets_the_next_request_start_another() {
    let mut x = Exports::default();
    let t = tenant("acme");
    assert!(x.add(&t, &export(), spans(1)).deliver);
    x.abandon(&t);
    assert!(x.add(&t, &export(), spans(1)).deliver);
    assert_eq!(x.next_batch(&t).map(|b| b.spans.len()), Some(2));
}

/// A receiver answering from a script, recording each body and every drop.
struct Script {
    answers: RefCell<Vec<Sent>>,
    posts: RefCell<Vec<usize>>,
    drops: RefCell<Vec<(u64, String)>>,
}

impl Script {
    fn new(answers: &[Sent]) -> Self {
        Self {
            answers: RefCell::new(answers.iter().rev().copied().collect()),
            posts: RefCell::default(),
            drops: RefCell::default(),
        }
    }
}

impl Collector for Script {
    async fn post(&self, _: &OtelExport, body: &[u8]) -> Sent {
        self.posts.borrow_mut().push(body.len());
        self.answers.borrow_mut().pop().unwrap_or(Sent::Taken)
    }
    fn dropped(&self, _: &TenantId, spans: u64, why: &str) {
        self.drops.borrow_mut().push((spans, why.to_owned()));
    }
}

#[test]
fn a_delivery_retries_a_connection_error_once_then_drops_and_counts_the_batch() {
    let exports = RefCell::new(Exports::default());
    let t = tenant("acme");
    exports.borrow_mut().add(&t, &export(), spans(3));
    let script = Script::new(&[Sent::Unreached, Sent::Unreached]);
    futures::executor::block_on(deliver(&exports, &t, &script));
    assert_eq!(script.posts.borrow().len(), 2, "one retry");
    assert_eq!(
        *script.drops.borrow(),
        vec![(3, "receiver unreachable".to_owned())]
    );
    let again = exports.borrow_mut().add(&t, &export(), spans(1));
    assert!(again.deliver, "the delivery ended");
}

#[test]
fn a_non_2xx_or_a_hung_receiver_drops_the_batch_without_a_retry() {
    for answer in [Sent::Refused(503), Sent::TimedOut] {
        let exports = RefCell::new(Exports::default());
        let t = tenant("acme");
        exports.borrow_mut().add(&t, &export(), spans(2));
        let script = Script::new(&[answer]);
        futures::executor::block_on(deliver(&exports, &t, &script));
        assert_eq!(script.posts.borrow().len(), 1, "{answer:?}");
        assert_eq!(script.drops.borrow()[0].0, 2, "{answer:?}");
    }
}

#[test]
fn a_taken_batch_is_not_counted() {
    let exports = RefCell::new(Exports::default());
    let t = tenant("acme");
    exports
        .borrow_mut()
        .add(&t, &export(), spans(MAX_BATCH + 1));
    let script = Script::new(&[]);
    futures::executor::block_on(deliver(&exports, &t, &script));
    assert_eq!(script.posts.borrow().len(), 2, "two batches");
    assert!(script.drops.borrow().is_empty());
}
