//! Upstream calls as `fetch` subrequests: the `Upstream` port of the cascade.

use crate::api::ChatRequest;
use crate::cascade::{Call, Reply};
use futures::future::{select, Either};
use futures::StreamExt;
use std::pin::pin;
use std::time::Duration;
use worker::js_sys::Uint8Array;
use worker::{
    AbortController, ByteStream, Delay, Fetch, Headers, Method, Request, RequestInit, Response,
};

/// Provider error bodies are read for the log and pass-through, up to this many bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// What a successful upstream call hands to the caller.
pub enum UpstreamBody {
    /// A complete, well-formed JSON body.
    Full {
        content_type: String,
        bytes: Vec<u8>,
    },
    /// An SSE stream: its first chunk (already read, the decision point) and the rest, unread.
    Stream {
        first: Vec<u8>,
        rest: ByteStream,
        /// Aborting it cancels the upstream read.
        controller: AbortController,
    },
}

pub struct FetchUpstream<'a> {
    pub request: &'a ChatRequest,
}

impl crate::cascade::Upstream for FetchUpstream<'_> {
    type Body = UpstreamBody;

    async fn send(&self, call: Call<'_>) -> Reply<UpstreamBody> {
        let controller = AbortController::default();
        let req = match self.build(&call) {
            Ok(r) => r,
            Err(e) => return Reply::Network(format!("could not build request: {e}")),
        };
        let fetch = Fetch::Request(req);
        let signal = controller.signal();
        let sending = pin!(fetch.send_with_signal(&signal));
        let timer = pin!(Delay::from(Duration::from_millis(call.timeout_ms)));
        let resp = match select(sending, timer).await {
            Either::Left((Ok(resp), _)) => resp,
            Either::Left((Err(e), _)) => return Reply::Network(e.to_string()),
            Either::Right(_) => {
                controller.abort();
                return Reply::Timeout;
            }
        };
        let status = resp.status_code();
        if !(200..300).contains(&status) {
            return failed(resp, status).await;
        }
        if self.request.stream {
            stream_start(resp, status, controller, call.timeout_ms).await
        } else {
            full_body(resp, status, controller, call.timeout_ms).await
        }
    }
}

impl FetchUpstream<'_> {
    /// Only the provider's key and our own headers go upstream: the caller's credentials, cookies
    /// and hop-by-hop headers never leave the gateway.
    fn build(&self, call: &Call<'_>) -> worker::Result<Request> {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        headers.set(
            "authorization",
            &format!("Bearer {}", call.key.secret.expose()),
        )?;
        headers.set(
            "accept",
            if self.request.stream {
                "text/event-stream"
            } else {
                "application/json"
            },
        )?;
        let body = self.request.body_for(&call.model.upstream_model);
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(Uint8Array::from(body.as_slice()).into()));
        Request::new_with_init(&call.provider.base_url.join("chat/completions"), &init)
    }
}

async fn failed(mut resp: Response, status: u16) -> Reply<UpstreamBody> {
    let retry_after = resp.headers().get("retry-after").ok().flatten();
    let mut text = resp.text().await.unwrap_or_default();
    if text.len() > MAX_ERROR_BODY {
        let mut cut = MAX_ERROR_BODY;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    Reply::Status {
        status,
        retry_after,
        text,
    }
}

/// A non-streamed 2xx is read whole (it is small) and must be JSON: a 200 with a broken body is a
/// failing provider, not an answer.
async fn full_body(
    mut resp: Response,
    status: u16,
    controller: AbortController,
    timeout_ms: u64,
) -> Reply<UpstreamBody> {
    let content_type = resp
        .headers()
        .get("content-type")
        .ok()
        .flatten()
        .unwrap_or_else(|| "application/json".to_owned());
    let reading = pin!(resp.bytes());
    let timer = pin!(Delay::from(Duration::from_millis(timeout_ms)));
    let bytes = match select(reading, timer).await {
        Either::Left((Ok(b), _)) => b,
        Either::Left((Err(e), _)) => {
            return Reply::Broken {
                status,
                detail: format!("body read failed: {e}"),
            }
        }
        Either::Right(_) => {
            controller.abort();
            return Reply::Timeout;
        }
    };
    if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err() {
        return Reply::Broken {
            status,
            detail: "body is not valid JSON".to_owned(),
        };
    }
    Reply::Success {
        status,
        body: UpstreamBody::Full {
            content_type,
            bytes,
        },
    }
}

/// Reads up to the first chunk of an SSE body: until then, failing over is still possible.
async fn stream_start(
    mut resp: Response,
    status: u16,
    controller: AbortController,
    timeout_ms: u64,
) -> Reply<UpstreamBody> {
    let mut rest = match resp.stream() {
        Ok(s) => s,
        Err(e) => {
            return Reply::Broken {
                status,
                detail: format!("no body: {e}"),
            }
        }
    };
    let next = pin!(rest.next());
    let timer = pin!(Delay::from(Duration::from_millis(timeout_ms)));
    match select(next, timer).await {
        Either::Left((Some(Ok(first)), _)) => Reply::Success {
            status,
            body: UpstreamBody::Stream {
                first,
                rest,
                controller,
            },
        },
        Either::Left((Some(Err(e)), _)) => Reply::Broken {
            status,
            detail: format!("stream failed before the first event: {e}"),
        },
        Either::Left((None, _)) => Reply::Broken {
            status,
            detail: "stream closed before any event".to_owned(),
        },
        Either::Right(_) => {
            controller.abort();
            Reply::Timeout
        }
    }
}
