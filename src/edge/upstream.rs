//! Upstream calls as `fetch` subrequests: the `Upstream` port of the cascade.

use super::body_read::{read_bounded, BodyReader, Bounded, Read};
use super::google_token::token_for;
use super::http::now_ms;
use super::js_fetch::{self, Fetched, Whole};
use super::own_poll::own_poll;
use super::signals::RateLimited200;
use crate::cascade::body_limit::{Capped, MAX_ERROR_BODY, MAX_SUCCESS_BODY};
use crate::cascade::context_window::{fit, fitted_request, Fit};
use crate::cascade::rate_limit_signals::{of_answer, signal_pairs};
use crate::cascade::{Call, UpstreamReply};
use crate::config::Provider;
use crate::providers::{self, Answer, Dialect, StreamDecoder};
use crate::request::status_refusal::refused_status;
use crate::request::upstream_call::outgoing;
use crate::request::upstream_events::{closed_at_start, failed_start};
use crate::stream::{Relay, RelayStep, StreamEnd};
use crate::surfaces::{Encoder, Inbound};
use crate::traces::TraceContext;
use crate::usage::StreamUsage;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use worker::js_sys::Uint8Array;
use worker::{web_sys, AbortController};

pub use super::upstream_body::{StreamStart, UpstreamBody};

pub struct FetchUpstream<'a> {
    request: &'a Inbound,
    /// The request's prompt estimate, read once (a translated Messages stream shows it).
    prompt_estimate: u64,
    /// The current candidate's body, built once and sent with each of its keys.
    body: RefCell<Option<(CandidateBody, Rc<Vec<u8>>)>>,
    /// The context-window guard: `(on, truncate)`, truncate from `X-CogniGate-Truncate: oldest`.
    window: (bool, bool),
    /// Non-streamed answers are read for a safety refusal (`on_refusal: fallback`).
    refusals: bool,
    /// The request's trace, and the calls made so far: call `n` carries span `n`'s
    /// `traceparent` (`traces::context`).
    trace: Option<&'a TraceContext>,
    calls: Cell<u32>,
    /// The last answer's quota headers, until the cascade takes them.
    quota: RefCell<Vec<(String, String)>>,
}

/// Which candidate a built body belongs to: (provider, model).
type CandidateBody = (String, String);

impl<'a> FetchUpstream<'a> {
    pub fn new(
        request: &'a Inbound,
        prompt_estimate: u64,
        trace: Option<&'a TraceContext>,
    ) -> Self {
        Self {
            request,
            prompt_estimate,
            body: RefCell::new(None),
            window: (false, false),
            refusals: false,
            trace,
            calls: Cell::new(0),
            quota: RefCell::default(),
        }
    }

    /// Reads answers for a safety refusal: only for a name with `on_refusal: fallback`.
    pub fn watching_refusals(mut self, on: bool) -> Self {
        self.refusals = on;
        self
    }

    /// The guard is on with the tenant's `context_window_guard` or when truncation is asked for.
    pub fn guarding(mut self, guard: bool, truncate: bool) -> Self {
        self.window = (guard || truncate, truncate);
        self
    }

    fn body_for(&self, call: &Call<'_>) -> Rc<Vec<u8>> {
        let id = (call.provider.name.to_string(), call.model.id.to_string());
        let mut memo = self.body.borrow_mut();
        match &*memo {
            Some((built_for, body)) if *built_for == id => body.clone(),
            _ => {
                let fitted = self
                    .window
                    .1
                    .then(|| fitted_request(self.request.chat(), call.model.context_window))
                    .flatten();
                let body = Rc::new(match &fitted {
                    // Truncated to fit: sent in chat terms, which every family speaks.
                    Some(chat) => self.request.fitted_body(call.provider, call.model, chat),
                    None => self.request.body(call.provider, call.model),
                });
                *memo = Some((id, body.clone()));
                body
            }
        }
    }
}

impl crate::cascade::Upstream for FetchUpstream<'_> {
    type Body = UpstreamBody;

    fn fit(&self, model: &crate::config::CatalogModel) -> Fit {
        match self.window {
            (false, _) => Fit::Fits,
            (true, truncate) => fit(self.request.chat(), model.context_window, truncate),
        }
    }

    fn supports(&self, provider: &Provider) -> bool {
        self.request.supported(provider)
    }

    fn is_refusal(&self, body: &UpstreamBody) -> bool {
        matches!(body, UpstreamBody::Full { refusal: true, .. })
    }

    fn take_quota_headers(&self) -> Vec<(String, String)> {
        self.quota.take()
    }

    async fn send(&self, call: Call<'_>) -> UpstreamReply<UpstreamBody> {
        let n = self.calls.get();
        self.calls.set(n.saturating_add(1));
        // Skipped before any fetch; `unsupported` counts toward nothing.
        if !self.request.supported(call.provider) {
            return UpstreamReply::Unsupported;
        }
        let started = now_ms();
        let token = match token_for(&call).await {
            Ok(token) => token,
            Err(reply) => return reply,
        };
        let controller = AbortController::default();
        let (url, init) = match self.build(&call, &controller, (token.as_deref(), n)) {
            Ok(r) => r,
            Err(e) => return UpstreamReply::Network(format!("could not build request: {e}")),
        };
        // A non-streamed answer's body comes with its headers when its length is announced.
        let whole_limit = (!self.request.stream()).then_some(MAX_SUCCESS_BODY);
        let (resp, headers_at, whole) =
            match js_fetch::fetch_within(&url, &init, call.timeout_ms, whole_limit).await {
                Fetched::Answered {
                    resp,
                    headers_at,
                    whole,
                } => (resp, headers_at, whole),
                Fetched::Failed(e) => return UpstreamReply::Network(e),
                Fetched::TimedOut => {
                    controller.abort();
                    return UpstreamReply::Timeout;
                }
            };
        let status = resp.status();
        let lines = js_fetch::answer_header_lines(&resp);
        *self.quota.borrow_mut() = signal_pairs(&lines);
        let timing = (started, headers_at.saturating_sub(started));
        // Body reads get what is left of the same timeout, never a fresh one.
        let deadline = started.saturating_add(call.timeout_ms);
        // Each way on is polled as a function of its own (own_poll.rs): an isolate compiles the
        // read its first answer takes, not all three.
        if !(200..300).contains(&status) {
            let reply = own_poll(failed(resp, (status, &lines), controller, deadline)).await;
            return refused_status(self.request, call.provider, self.refusals, reply);
        }
        let kind = Dialect::of(call.provider);
        if self.request.stream() {
            // Usage is read on the upstream side of the stream, before the surface's encoder.
            let (decoder, usage) = if self.request.native(kind) {
                (StreamDecoder::anthropic_native(), StreamUsage::messages())
            } else {
                let asked = providers::anthropic::stream::wants_usage(self.request.chat());
                let decoder = StreamDecoder::new(kind, &call.model.upstream_model, now_ms() / 1000);
                (decoder, StreamUsage::chat(!asked))
            };
            let read_timeout = u64::from(call.provider.timeout_ms);
            own_poll(stream_start(
                resp,
                status,
                controller,
                (
                    decoder,
                    Relay::metering(usage),
                    self.request.encoder(kind, self.prompt_estimate),
                    kind,
                ),
                (call.timeout_ms, read_timeout),
                timing,
            ))
            .await
        } else {
            let rate_limited = RateLimited200::of(call.provider, &lines);
            let read = |bytes| self.request.read_answer(kind, bytes, now_ms() / 1000);
            let times = (deadline, timing.1);
            let watch = self.refusals.then_some(kind);
            let answer = (read, rate_limited, watch);
            own_poll(full_body(resp, whole, status, controller, answer, times)).await
        }
    }
}

impl FetchUpstream<'_> {
    /// The URL and the `fetch` init (`upstream_call::outgoing`), on the runtime's own objects
    /// (`js_fetch`: no `Request` is built to be sent).
    fn build(
        &self,
        call: &Call<'_>,
        controller: &AbortController,
        (token, n): (Option<&str>, u32),
    ) -> Result<(String, web_sys::RequestInit), String> {
        let body = self.body_for(call);
        let (url, mut pairs) = outgoing(self.request, call, &body, (now_ms(), token));
        pairs.extend(
            self.trace
                .map(|t| t.upstream_headers(n))
                .unwrap_or_default(),
        );
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let headers = web_sys::Headers::new().map_err(js_fetch::describe)?;
        js_fetch::set_all(&headers, &pairs).map_err(js_fetch::describe)?;
        let init = web_sys::RequestInit::new();
        init.set_method("POST");
        init.set_headers(&headers);
        init.set_body(&Uint8Array::from(body.as_slice()));
        // Never followed: the provider's key would go along to the `Location` host. A 3xx is
        // classified like any other status a chat API should not answer (`server`).
        init.set_redirect(web_sys::RequestRedirect::Manual);
        let signal = controller.signal();
        init.set_signal(Some(&*signal));
        Ok((url, init))
    }
}

/// An error body is read for the log and pass-through, at most `MAX_ERROR_BODY` of it and only
/// within the call's timeout: a body that stalls is the candidate's `timeout`.
async fn failed(
    resp: web_sys::Response,
    (status, lines): (u16, &str),
    controller: AbortController,
    deadline: u64,
) -> UpstreamReply<UpstreamBody> {
    let (retry_after, headers) = of_answer(lines);
    let text = match read_bounded(&resp, Capped::new(MAX_ERROR_BODY), deadline, Capped::full).await
    {
        Bounded::Read(buf) => {
            if buf.full() {
                controller.abort();
            }
            buf.into_text()
        }
        // The status alone still decides; the text is only for the log.
        Bounded::Failed(_) => String::new(),
        Bounded::TimedOut => {
            controller.abort();
            return UpstreamReply::Timeout;
        }
    };
    UpstreamReply::Status {
        status,
        retry_after,
        headers,
        text,
    }
}

/// A non-streamed 2xx is read whole, up to `MAX_SUCCESS_BODY` and within the call's timeout, and
/// must be JSON: a 200 with a broken body is a failing provider, not an answer.
async fn full_body(
    resp: web_sys::Response,
    whole: Option<Whole>,
    status: u16,
    controller: AbortController,
    (read, rate_limited, watch): (
        impl FnOnce(Vec<u8>) -> Result<Answer, String>,
        Option<RateLimited200>,
        Option<Dialect>,
    ),
    (deadline, headers_ms): (u64, u64),
) -> UpstreamReply<UpstreamBody> {
    let buf = Capped::new(MAX_SUCCESS_BODY);
    let bounded = match whole {
        Some(whole) => Bounded::of_whole(buf, whole),
        None => read_bounded(&resp, buf, deadline, Capped::over).await,
    };
    let bytes = match bounded {
        Bounded::Read(buf) if buf.over() => {
            controller.abort();
            return UpstreamReply::Oversized { status };
        }
        Bounded::Read(buf) => buf.into_bytes(),
        Bounded::Failed(e) => {
            return UpstreamReply::Broken {
                status,
                detail: format!("body read failed: {e}"),
            }
        }
        Bounded::TimedOut => {
            controller.abort();
            return UpstreamReply::Timeout;
        }
    };
    if let Some(reply) = rate_limited.and_then(|r| r.check(&bytes)) {
        return reply;
    }
    // Read on the upstream's own answer, before it is put into the caller's surface.
    let refusal = watch.is_some_and(|kind| providers::refusal::is_refusal(kind, &bytes));
    match read(bytes) {
        Ok(Answer { bytes, usage }) => UpstreamReply::Success {
            status,
            body: UpstreamBody::Full {
                content_type: "application/json".to_owned(),
                bytes,
                usage,
                headers_ms,
                refusal,
            },
        },
        Err(detail) => UpstreamReply::Broken { status, detail },
    }
}

/// Reads until the stream's first data event: a failure before it fails over (`failed_start`).
async fn stream_start(
    resp: web_sys::Response,
    status: u16,
    controller: AbortController,
    (mut decoder, mut relay, encoder, dialect): (StreamDecoder, Relay, Encoder, Dialect),
    (timeout_ms, read_timeout_ms): (u64, u64),
    (started_ms, headers_ms): (u64, u64),
) -> UpstreamReply<UpstreamBody> {
    let mut reader = match resp.body() {
        Some(s) => BodyReader::new(s),
        None => {
            return UpstreamReply::Broken {
                status,
                detail: "no body: body is not streamable".to_owned(),
            }
        }
    };
    let deadline = now_ms().saturating_add(timeout_ms);
    let mut first = Vec::new();
    loop {
        let left = deadline.saturating_sub(now_ms()).max(1);
        let step = match reader.read(left).await {
            Read::Chunk(bytes) => relay.on_chunk(&decoder.decode(bytes)),
            Read::End => match closed_at_start(&mut decoder, &mut relay, status) {
                Ok(step) => step,
                Err(broken) => return broken,
            },
            Read::Failed(e) => {
                return UpstreamReply::Broken {
                    status,
                    detail: format!("stream failed before its first event: {e}"),
                }
            }
            Read::TimedOut => {
                controller.abort();
                return UpstreamReply::Timeout;
            }
        };
        let finished = match step {
            RelayStep::Forward(out) => {
                first.extend_from_slice(&out);
                None
            }
            RelayStep::Finish {
                end: StreamEnd::Failed(detail),
                ..
            } => {
                controller.abort();
                return failed_start(dialect, status, detail);
            }
            RelayStep::Finish { bytes, end } => {
                first.extend_from_slice(&bytes);
                Some(end)
            }
        };
        if finished.is_some() || relay.data_events() > 0 {
            return UpstreamReply::Success {
                status,
                body: UpstreamBody::Stream(StreamStart {
                    first,
                    finished,
                    rest: reader,
                    relay,
                    decoder,
                    encoder,
                    controller,
                    read_timeout_ms,
                    started_ms,
                    headers_ms,
                }),
            };
        }
    }
}
