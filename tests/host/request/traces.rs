//! A traced request's spans through the order: exported once when it ends (a stream's when it
//! settles), under the caller's trace, with the span ids its upstream calls carried.

use super::order::AT;
use super::world::{Request, Says, World};
use crate::support::fakes::tenant;
use cognigate::config::otel::{OtelExport, OtelProtocol};
use cognigate::config::policy::KeyPolicy;
use cognigate::request::reply::Body;
use cognigate::request::serve;
use cognigate::surfaces::Surface;
use cognigate::traces::span::{AttrValue, SpanKind};
use futures::executor::block_on;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn traced_world(on: bool) -> World {
    let mut cfg = tenant(1, "failover");
    cfg.otel = on.then(|| OtelExport {
        endpoint: "https://otel.example/v1/traces".into(),
        protocol: OtelProtocol::HttpJson,
        headers: Vec::new(),
        sample_ratio: 1.0,
        capture_content: false,
    });
    World::with(KeyPolicy::default(), cfg)
}

fn send(world: &World, req: &Request) -> cognigate::request::reply::Reply<super::world::Relayed> {
    block_on(serve(world, req, (Surface::Chat, "req_1"), &AT))
}

#[test]
fn a_traced_fallback_exports_one_server_span_and_one_client_span_per_call_with_the_ids_each_call_carried(
) {
    let world = traced_world(true);
    world.says("m1", &[Says::Unavailable]);
    world.says("m2", &[Says::Ok]);
    let req = Request::chat(&world.token, "chain").with("traceparent", PARENT);
    assert_eq!(send(&world, &req).status, 200);
    let spans = world.spans.borrow();
    assert_eq!(spans.len(), 3, "{spans:?}");
    assert_eq!(spans[0].kind, SpanKind::Server);
    assert_eq!(spans[0].name, "chat chain");
    assert_eq!(
        hex::encode(spans[0].trace_id),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(
        spans[0].attr("cognigate.fallback_used"),
        Some(&AttrValue::Bool(true))
    );
    let sent = world.traceparents.borrow();
    assert_eq!(sent.len(), 2);
    for (span, traceparent) in spans[1..].iter().zip(sent.iter()) {
        assert_eq!(span.kind, SpanKind::Client);
        let traceparent = traceparent.as_deref().unwrap();
        assert_eq!(&traceparent[36..52], hex::encode(span.span_id));
        assert_eq!(span.parent_span_id, Some(spans[0].span_id));
    }
    assert_eq!(world.request_events().len(), 1);
}

#[test]
fn a_tenant_without_otel_sends_no_traceparent_and_exports_nothing() {
    let world = traced_world(false);
    let req = Request::chat(&world.token, "m1").with("traceparent", PARENT);
    assert_eq!(send(&world, &req).status, 200);
    assert!(world.spans.borrow().is_empty());
    assert_eq!(*world.traceparents.borrow(), vec![None]);
}

#[test]
fn an_unsampled_parent_is_not_exported_and_its_calls_carry_the_unsampled_flag() {
    let world = traced_world(true);
    let unsampled = PARENT.replace("-01", "-00");
    let req = Request::chat(&world.token, "m1").with("traceparent", &unsampled);
    assert_eq!(send(&world, &req).status, 200);
    assert!(world.spans.borrow().is_empty());
    let sent = world.traceparents.borrow();
    assert!(sent[0].as_deref().unwrap().ends_with("-00"), "{sent:?}");
}

#[test]
fn a_requests_refused_before_any_call_still_has_its_server_span() {
    let world = traced_world(true);
    let req = Request::chat(&world.token, "nope").with("traceparent", PARENT);
    let status = send(&world, &req).status;
    assert_eq!(status, 404);
    let spans = world.spans.borrow();
    assert_eq!(spans.len(), 1);
    assert_eq!(
        spans[0].attr("http.response.status_code"),
        Some(&AttrValue::Int(404))
    );
}

#[test]
fn a_streams_spans_wait_for_it_to_settle_and_then_carry_its_usage_on_the_serving_call() {
    let world = traced_world(true);
    world.says("m1", &[Says::Stream]);
    let req = Request::new(
        &world.token,
        r#"{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
    );
    let reply = send(&world, &req);
    assert!(
        world.spans.borrow().is_empty(),
        "nothing exported before it settles"
    );
    let Body::Relay(relay) = reply.body else {
        panic!("a served stream is relayed");
    };
    let mut bill = relay.bill.expect("the stream's bill");
    let unsettled = bill
        .metric
        .trace
        .take()
        .expect("its spans ride with its metric");
    let record = bill.pending.served_with(
        2_000_000,
        (
            &bill.model,
            (
                cognigate::usage::TokenCounts::new(5, 9, 0),
                cognigate::usage::UsageSource::Reported,
            ),
        ),
        &[],
    );
    let (_, export, spans) = unsettled.settle(Some(&record), 2_000_000);
    assert!(export.is_some());
    assert_eq!(spans.len(), 2);
    assert_eq!(spans[0].end_ns, 2_000_000_000_000);
    assert_eq!(
        spans[1].end_ns, 2_000_000_000_000,
        "the call lasts until the stream settles"
    );
    assert_eq!(
        spans[1].attr("gen_ai.usage.output_tokens"),
        Some(&AttrValue::Int(9))
    );
    assert!(spans[0].attr("gen_ai.usage.output_tokens").is_none());
}
