//! What the mock answers, and how it writes it (status, headers, latency, streamed or cut bodies).

use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

/// A latch a test opens to let a scripted stream continue.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub fn open(&self) {
        let (open, cv) = &*self.0;
        *open.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
    }

    /// Waits at most 30 s so a test that forgets to open it fails instead of hanging.
    fn wait(&self) {
        let (open, cv) = &*self.0;
        let guard = open.lock().unwrap_or_else(|p| p.into_inner());
        let _ = cv.wait_timeout_while(guard, Duration::from_secs(30), |o| !*o);
    }
}

/// One step of a scripted SSE body.
#[derive(Debug, Clone)]
pub enum Step {
    /// `data: <json>\n\n`
    Data(String),
    /// Bytes exactly as given.
    Raw(String),
    Sleep(u64),
    Wait(Gate),
    /// Drop the connection without ending the chunked body.
    Cut,
}

#[derive(Debug, Clone, Default)]
pub enum Body {
    /// A chat completion naming the requested model (an SSE stream when the request asked for one).
    #[default]
    Completion,
    Bytes(String),
    Stream(Vec<Step>),
    /// Close the connection without answering.
    Hangup,
    /// Announce the whole body in Content-Length, send only the first half, then close.
    Truncated(String),
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Latency before the status line.
    pub delay_ms: u64,
    pub body: Body,
    /// A chat completion's answer as this many words (`w1 w2 ...`), streamed one event per word;
    /// `None`: the short default answer. Benchmarks use it for a long stream.
    pub words: Option<usize>,
}

/// A 200 chat completion, at once.
impl Default for Reply {
    fn default() -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            delay_ms: 0,
            body: Body::Completion,
            words: None,
        }
    }
}

impl Reply {
    pub fn ok() -> Self {
        Self::default()
    }

    pub fn status(status: u16) -> Self {
        let body = format!(
            r#"{{"error":{{"message":"mock error {status}","type":"mock_error","code":"mock_{status}"}}}}"#
        );
        Self {
            status,
            body: Body::Bytes(body),
            ..Self::default()
        }
    }

    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            body: Body::Bytes(body.to_owned()),
            ..Self::default()
        }
    }

    pub fn stream(steps: Vec<Step>) -> Self {
        Self {
            status: 200,
            body: Body::Stream(steps),
            ..Self::default()
        }
    }

    pub fn hangup() -> Self {
        Self {
            body: Body::Hangup,
            ..Self::default()
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn delay(mut self, ms: u64) -> Self {
        self.delay_ms = ms;
        self
    }

    pub fn words(mut self, n: usize) -> Self {
        self.words = Some(n);
        self
    }
}

pub(super) struct Context<'a> {
    pub name: &'a str,
    pub model: &'a str,
    pub stream: bool,
    /// The request came to the Messages API: default answers speak it.
    pub anthropic: bool,
    /// The request came to Gemini's `generateContent`: default answers speak it.
    pub gemini: bool,
    /// The request came to the embeddings API.
    pub embeddings: bool,
    /// `stream_options.include_usage`: the default stream ends with a usage chunk.
    pub include_usage: bool,
}

pub(super) enum Written {
    KeepAlive,
    Closed,
}

/// The default non-streamed answer.
pub fn completion_body(model: &str, content: &str) -> String {
    serde_json::json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    })
    .to_string()
}

/// The default embeddings answer: one three-dimensional vector.
pub fn embeddings_body(model: &str) -> String {
    serde_json::json!({
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": [0.25, -0.5, 1.0]}],
        "model": model,
        "usage": {"prompt_tokens": 3, "total_tokens": 3}
    })
    .to_string()
}

/// One `chat.completion.chunk` carrying `content`.
pub fn chunk_event(model: &str, content: &str) -> String {
    serde_json::json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]
    })
    .to_string()
}

fn default_stream(model: &str, content: &str, include_usage: bool) -> Vec<Step> {
    let mut steps: Vec<Step> = content
        .split_inclusive(' ')
        .map(|word| Step::Data(chunk_event(model, word)))
        .collect();
    if include_usage {
        let usage = serde_json::json!({
            "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": model, "choices": [],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
        });
        steps.push(Step::Data(usage.to_string()));
    }
    steps.push(Step::Data("[DONE]".to_owned()));
    steps
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

impl Reply {
    pub(super) fn write(&self, w: &mut TcpStream, ctx: &Context<'_>) -> io::Result<Written> {
        if self.delay_ms > 0 {
            thread::sleep(Duration::from_millis(self.delay_ms));
        }
        let content = match self.words {
            Some(n) => (1..=n).map(|i| format!("w{i} ")).collect(),
            None => format!("Hello from {}, model {}.", ctx.name, ctx.model),
        };
        let steps;
        let (bytes, stream) = match &self.body {
            Body::Hangup => {
                let _ = w.shutdown(Shutdown::Both);
                return Ok(Written::Closed);
            }
            Body::Truncated(full) => {
                let head = format!(
                    "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    self.status,
                    reason(self.status),
                    full.len()
                );
                w.write_all(head.as_bytes())?;
                w.write_all(&full.as_bytes()[..full.len() / 2])?;
                w.flush()?;
                let _ = w.shutdown(Shutdown::Both);
                return Ok(Written::Closed);
            }
            Body::Completion if ctx.embeddings => (Some(embeddings_body(ctx.model)), None),
            Body::Completion if ctx.stream && ctx.anthropic => {
                steps = super::anthropic::stream_events(ctx.model, &content)
                    .into_iter()
                    .map(Step::Raw)
                    .collect();
                (None, Some(&steps))
            }
            Body::Completion if ctx.stream && ctx.gemini => {
                steps = super::gemini::stream_events(ctx.model, &content)
                    .into_iter()
                    .map(Step::Raw)
                    .collect();
                (None, Some(&steps))
            }
            Body::Completion if ctx.gemini => {
                (Some(super::gemini::answer_body(ctx.model, &content)), None)
            }
            Body::Completion if ctx.stream => {
                steps = default_stream(ctx.model, &content, ctx.include_usage);
                (None, Some(&steps))
            }
            Body::Completion if ctx.anthropic => (
                Some(super::anthropic::message_body(ctx.model, &content)),
                None,
            ),
            Body::Completion => (Some(completion_body(ctx.model, &content)), None),
            Body::Bytes(b) => (Some(b.clone()), None),
            Body::Stream(s) => (None, Some(s)),
        };
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some(body) = bytes {
            head.push_str(&format!(
                "content-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            ));
            w.write_all(head.as_bytes())?;
            w.write_all(body.as_bytes())?;
            w.flush()?;
            return Ok(Written::KeepAlive);
        }
        head.push_str("content-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n");
        w.write_all(head.as_bytes())?;
        w.flush()?;
        for step in stream.into_iter().flatten() {
            match step {
                Step::Data(d) => write_chunk(w, &format!("data: {d}\n\n"))?,
                Step::Raw(r) => write_chunk(w, r)?,
                Step::Sleep(ms) => thread::sleep(Duration::from_millis(*ms)),
                Step::Wait(g) => g.wait(),
                Step::Cut => {
                    let _ = w.shutdown(Shutdown::Both);
                    return Ok(Written::Closed);
                }
            }
        }
        w.write_all(b"0\r\n\r\n")?;
        w.flush()?;
        Ok(Written::KeepAlive)
    }
}

fn write_chunk(w: &mut TcpStream, data: &str) -> io::Result<()> {
    write!(w, "{:x}\r\n{data}\r\n", data.len())?;
    w.flush()
}
