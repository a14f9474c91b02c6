//! A scriptable OpenAI-compatible upstream on 127.0.0.1, for the end-to-end tests, the local demo
//! and the benchmarks (native only, std only).
//!
//! Tests push rules ("the next call with key sk-1 answers 429 with Retry-After: 5"); a call no
//! rule matches gets the default reply, a well-formed chat completion (streamed when asked).
//! Every call is recorded: method, path, key, model, body, and whether the client went away.

mod anthropic;
mod azure;
mod gemini;
mod http;
mod reply;

pub use reply::{chunk_event, completion_body, Body, Gate, Reply, Step};

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

/// One call the mock received.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: String,
    pub path: String,
    /// Bearer token or `x-api-key`.
    pub key: Option<String>,
    pub model: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
    /// The client closed the connection before the reply was fully written.
    pub client_gone: bool,
}

impl Call {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Which calls a rule answers, and how many times (forever when `times` is `None`).
#[derive(Debug, Clone, Default)]
pub struct Rule {
    pub key: Option<String>,
    pub model: Option<String>,
    pub times: Option<usize>,
    pub reply: Reply,
}

impl Rule {
    pub fn any(reply: Reply) -> Self {
        Self {
            reply,
            ..Self::default()
        }
    }

    pub fn key(mut self, key: &str) -> Self {
        self.key = Some(key.to_owned());
        self
    }

    pub fn model(mut self, model: &str) -> Self {
        self.model = Some(model.to_owned());
        self
    }

    pub fn times(mut self, n: usize) -> Self {
        self.times = Some(n);
        self
    }

    fn matches(&self, key: Option<&str>, model: Option<&str>) -> bool {
        self.key.as_deref().is_none_or(|k| Some(k) == key)
            && self.model.as_deref().is_none_or(|m| Some(m) == model)
    }
}

/// Random failures for load tests: a deterministic xorshift stream, so a run can be replayed.
#[derive(Debug, Clone, Default)]
struct Chaos {
    permille: u32,
    replies: Vec<Reply>,
    state: u64,
}

impl Chaos {
    fn next(&mut self) -> u64 {
        let mut x = self.state.max(1);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    fn roll(&mut self) -> Option<Reply> {
        if self.replies.is_empty() || self.next() % 1000 >= u64::from(self.permille) {
            return None;
        }
        let i = (self.next() % self.replies.len() as u64) as usize;
        self.replies.get(i).cloned()
    }
}

#[derive(Default)]
struct Shared {
    chaos: Mutex<Chaos>,
    name: String,
    rules: Mutex<Vec<Rule>>,
    default: Mutex<Reply>,
    calls: Mutex<Vec<Call>>,
    /// Open connections, closed when the mock is dropped: a client's pooled connection must not
    /// outlive the mock and meet a new one that reused the port.
    conns: Mutex<Vec<TcpStream>>,
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A test that panicked while holding the lock must not wedge every other test.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    fn reply_for(&self, key: Option<&str>, model: Option<&str>) -> Reply {
        let mut rules = lock(&self.rules);
        if let Some(i) = rules.iter().position(|r| r.matches(key, model)) {
            let reply = rules[i].reply.clone();
            if let Some(n) = rules[i].times.as_mut() {
                *n -= 1;
                if *n == 0 {
                    rules.remove(i);
                }
            }
            return reply;
        }
        drop(rules);
        if let Some(reply) = lock(&self.chaos).roll() {
            return reply;
        }
        lock(&self.default).clone()
    }
}

/// A running mock; stops accepting when dropped.
pub struct MockProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl MockProvider {
    pub fn start(name: &str) -> io::Result<Self> {
        Self::start_on(name, 0)
    }

    pub fn start_on(name: &str, port: u16) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            name: name.to_owned(),
            ..Shared::default()
        });
        let accept_shared = Arc::clone(&shared);
        thread::spawn(move || accept_loop(&listener, &accept_shared));
        Ok(Self { addr, shared })
    }

    /// Base URL as a provider record wants it: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn push(&self, rule: Rule) {
        lock(&self.shared.rules).push(rule);
    }

    /// Fails `permille` of the calls no rule matches with one of `replies`, chosen at random from
    /// a stream seeded with `seed`.
    pub fn set_chaos(&self, permille: u32, replies: Vec<Reply>, seed: u64) {
        *lock(&self.shared.chaos) = Chaos {
            permille,
            replies,
            state: seed,
        };
    }

    pub fn set_default(&self, reply: Reply) {
        *lock(&self.shared.default) = reply;
    }

    pub fn calls(&self) -> Vec<Call> {
        lock(&self.shared.calls).clone()
    }

    pub fn count(&self) -> usize {
        lock(&self.shared.calls).len()
    }

    pub fn keys(&self) -> Vec<String> {
        self.calls().into_iter().filter_map(|c| c.key).collect()
    }

    pub fn clear(&self) {
        lock(&self.shared.calls).clear();
        lock(&self.shared.rules).clear();
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for conn in lock(&self.shared.conns).drain(..) {
            let _ = conn.shutdown(std::net::Shutdown::Both);
        }
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        if let Ok(c) = stream.try_clone() {
            lock(&shared.conns).push(c);
        }
        let conn_shared = Arc::clone(shared);
        thread::spawn(move || serve_connection(stream, &conn_shared));
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let Ok(mut reader) = stream.try_clone().map(io::BufReader::new) else {
        return;
    };
    let mut writer = stream;
    while let Ok(Some(req)) = http::read_request(&mut reader) {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap_or_default();
        let route = req.path.split('?').next().unwrap_or_default();
        let azure = azure::deployment(&req.path);
        let google = gemini::route(&req.path);
        let embed = gemini::embed_route(&req.path);
        let model = azure
            .or(google.map(|(m, _)| m))
            .or(embed)
            .map(str::to_owned)
            .or_else(|| {
                body.get("model")
                    .and_then(|m| m.as_str())
                    .map(str::to_owned)
            });
        let key = req.bearer_or_api_key();
        let is_anthropic = route.ends_with("/messages");
        let refused = if is_anthropic {
            anthropic::refusal(&req.headers, &body)
        } else if azure.is_some() {
            azure::refusal(&req.path, &req.headers)
        } else if google.is_some() {
            gemini::refusal(&req.path, &req.headers, &body)
        } else {
            None
        };
        let reply = match (refused, embed) {
            (Some((status, text)), _) => Reply::json(status, &text),
            (None, Some(m)) => {
                let (status, text) = gemini::embed_answer(m, &req.headers, &body);
                Reply::json(status, &text)
            }
            (None, None) => shared.reply_for(key.as_deref(), model.as_deref()),
        };
        let index = {
            let mut calls = lock(&shared.calls);
            calls.push(Call {
                method: req.method.clone(),
                path: req.path.clone(),
                key,
                model: model.clone(),
                headers: req.headers.clone(),
                body: body.clone(),
                client_gone: false,
            });
            calls.len() - 1
        };
        let wants_stream = body.get("stream").and_then(serde_json::Value::as_bool) == Some(true)
            || google.is_some_and(|(_, s)| s);
        let ctx = reply::Context {
            name: &shared.name,
            model: model.as_deref().unwrap_or("unknown"),
            stream: wants_stream,
            anthropic: is_anthropic,
            gemini: google.is_some(),
            embeddings: route.ends_with("/embeddings"),
            include_usage: body
                .pointer("/stream_options/include_usage")
                .and_then(serde_json::Value::as_bool)
                == Some(true),
        };
        match reply.write(&mut writer, &ctx) {
            Ok(reply::Written::KeepAlive) => {}
            Ok(reply::Written::Closed) => return,
            Err(_) => {
                lock(&shared.calls)[index].client_gone = true;
                return;
            }
        }
    }
}
