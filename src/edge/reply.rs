//! A `request::reply::Reply` as the runtime's response: its headers in one write (with the
//! request's ids and the debug memory counter), and a served stream handed to the relay with
//! what it owes when it settles.

use super::js_fetch;
use super::ports::RequestPorts;
use super::stream_capture::StreamCapture;
use super::stream_response::{self as streamed, StreamOwner, StreamUsageOwner};
use super::upstream::StreamStart;
use super::usage_sink::StreamHandOff;
use crate::request::reply::{Body, Relay, Reply};
use worker::{Headers, Response, ResponseBody};

/// The headers every caller answer carries: its request id under each name a client reads
/// (OpenAI's SDKs read `x-request-id`, Anthropic's `request-id`).
pub const REQUEST_ID_HEADERS: [&str; 3] = ["x-request-id", "request-id", "x-cognigate-request-id"];

pub(super) fn respond(
    reply: Reply<StreamStart>,
    ports: &RequestPorts<'_>,
    request_id: &str,
) -> worker::Result<Response> {
    let Reply {
        status,
        mut headers,
        body,
    } = reply;
    let (resp, content_type) = match body {
        Body::Bytes {
            content_type,
            bytes,
        } => (Response::from_bytes(bytes)?, content_type),
        Body::Events(sse) => {
            let once = futures::stream::once(async move { Ok::<_, worker::Error>(sse) });
            (Response::from_stream(once)?, event_stream(&mut headers))
        }
        Body::Relay(relay) => {
            let stream = relay_stream(*relay, ports)?;
            let resp = Response::from_body(ResponseBody::Stream(stream))?;
            (resp, event_stream(&mut headers))
        }
    };
    headers.push(("content-type", content_type));
    for name in REQUEST_ID_HEADERS {
        headers.push((name, request_id.to_owned()));
    }
    if ports.dep.debug_counters {
        headers.push(("x-cognigate-wasm-memory-bytes", memory_bytes()));
    }
    let pairs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let all = Headers::new();
    js_fetch::set_all(&all.0, &pairs)?;
    Ok(resp.with_status(status).with_headers(all))
}

/// A stream's headers besides its content type.
fn event_stream(headers: &mut Vec<(&'static str, String)>) -> String {
    headers.push(("cache-control", "no-cache".to_owned()));
    "text/event-stream".to_owned()
}

fn relay_stream(
    relay: Relay<StreamStart>,
    p: &RequestPorts<'_>,
) -> worker::Result<worker::web_sys::ReadableStream> {
    let Relay {
        start,
        tenant,
        request_id,
        owed_report,
        probe_hold_ms,
        bill,
        store,
    } = relay;
    let usage = bill.map(|b| StreamUsageOwner {
        pending: b.pending,
        model: b.model,
        prompt_estimate: b.prompt_estimate,
        hand_off: StreamHandOff::start(p.env, p.ctx, b.governed, b.metric),
    });
    let cache = store.map(|s| StreamCapture::start((p.env, p.ctx), s));
    let owner = StreamOwner {
        env: p.env.clone(),
        tenant,
        request_id,
        owed_report,
        probe_hold_ms,
        usage,
        cache,
    };
    streamed::body(start, owner, p.ctx)
}

/// Adds the debug memory counter to an answer made outside the request's order.
pub(super) fn with_memory_counter(
    resp: Response,
    dep: &super::deployment::Deployment,
) -> worker::Result<Response> {
    if dep.debug_counters {
        resp.headers()
            .set("x-cognigate-wasm-memory-bytes", &memory_bytes())?;
    }
    Ok(resp)
}

/// Wasm memory never shrinks, so this is the isolate's peak so far (tests read it).
fn memory_bytes() -> String {
    (core::arch::wasm32::memory_size(0) * 65_536).to_string()
}
