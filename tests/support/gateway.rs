//! The end-to-end harness: the built worker on workerd (through Miniflare, with local D1 and
//! Durable Objects in a fresh state directory), driven over HTTP.
//!
//! One gateway per run of the e2e binary (`Gateway::shared`), shared by the tests of every module;
//! each test works in its own tenant, which is exactly the isolation the gateway promises. A
//! module whose tests read what the gateway holds for every tenant (the scheduled pass, the
//! metrics scrape) starts its own with `Gateway::start`. The Node launcher exits when its stdin closes, so
//! the gateway never outlives the test process, whether the tests pass, fail or panic.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

pub use super::tenant::Tenant;

pub const ADMIN_KEY: &str = "test-admin-key";
/// The key-encryption key the test gateways run with.
pub const KEK_HEX: &str = "4f1c0b7e9a2d3c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6";
/// A Worker secret provider keys can reference by name (only `PROVIDER_*` names may be).
pub const SECRET_NAME: &str = "PROVIDER_TEST_KEY";
pub const SECRET_VALUE: &str = "sk-from-worker-secret-7777";

pub struct Gateway {
    pub url: String,
    pub state_dir: PathBuf,
    control: Mutex<(ChildStdin, Receiver<String>)>,
    child: Child,
    agent: ureq::Agent,
}

pub fn header_list(resp: &ureq::http::Response<ureq::Body>) -> Vec<(String, String)> {
    resp.headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
        .collect()
}

/// An HTTP answer, read whole.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub text: String,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn error_code(&self) -> Option<String> {
        self.json()["error"]["code"].as_str().map(str::to_owned)
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        // A fresh connection per request: a pooled one the server has just closed would turn
        // into a spurious "connection reset".
        .max_idle_connections(0)
        .build()
        .into()
}

/// A module's own gateway, for a module whose tests read what the gateway holds for every tenant
/// (a scheduled pass visits every watched tenant and probes their due breakers, so another
/// module's tenants would be probed by these passes or crowd these out), and the lock its tests
/// take to run one at a time, so one test's pass (and its clock) never moves another's tenant.
/// Each module holds one in a `static`.
pub struct OwnGateway {
    gw: OnceLock<Gateway>,
    lock: Mutex<()>,
}

impl OwnGateway {
    pub const fn new() -> Self {
        Self {
            gw: OnceLock::new(),
            lock: Mutex::new(()),
        }
    }

    /// The gateway, started on first use.
    pub fn get(&'static self) -> &'static Gateway {
        self.gw.get_or_init(|| Gateway::start(&[]))
    }

    /// The gateway, with this module's other tests held off while the guard lives.
    pub fn alone(&'static self) -> (&'static Gateway, MutexGuard<'static, ()>) {
        let guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        (self.get(), guard)
    }
}

impl Gateway {
    /// The gateway shared by every test of the e2e binary.
    pub fn shared() -> &'static Gateway {
        static GW: OnceLock<Gateway> = OnceLock::new();
        GW.get_or_init(|| Gateway::start(&[]))
    }

    pub fn start(vars: &[(&str, &str)]) -> Gateway {
        Self::start_in(None, false, vars, &[])
    }

    /// A private gateway with the `ANALYTICS` Analytics Engine binding, which the harness adds
    /// only when asked (`--analytics`).
    pub fn start_with_analytics() -> Gateway {
        Self::start_in(None, false, &[], &["--analytics"])
    }

    /// A private gateway whose storage outlives it, for `restart`.
    pub fn start_durable() -> Gateway {
        Self::start_in(None, true, &[], &[])
    }

    /// `start_durable` with these vars (a `restart` runs with the defaults).
    pub fn start_durable_with(vars: &[(&str, &str)]) -> Gateway {
        Self::start_in(None, true, vars, &[])
    }

    /// Stops this runtime, keeping its D1 and Durable Object storage, and starts a new one on it:
    /// every object is evicted and must come back from storage.
    pub fn restart(self) -> Gateway {
        let dir = self.state_dir.clone();
        self.stop();
        Self::start_in(Some(dir), true, &[], &[])
    }

    fn stop(mut self) {
        let (stdin, _) = self.control.into_inner().unwrap_or_else(|p| p.into_inner());
        drop(stdin);
        let _ = self.child.wait();
    }

    fn start_in(
        reuse: Option<PathBuf>,
        keep: bool,
        vars: &[(&str, &str)],
        flags: &[&str],
    ) -> Gateway {
        let script = root().join("build/index.js");
        assert!(
            script.exists(),
            "{} is missing: build the worker first (`make build`, or run `make test`)",
            script.display()
        );
        static N: AtomicUsize = AtomicUsize::new(0);
        // Under target/ so `make clean` takes it; the launcher removes the databases on exit and
        // leaves worker.log for a post-mortem.
        let state_dir = reuse.unwrap_or_else(|| {
            root().join("target/e2e").join(format!(
                "{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ))
        });
        std::fs::create_dir_all(&state_dir).expect("state dir");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(state_dir.join("worker.log"))
            .expect("log file");
        let mut cmd = Command::new("node");
        cmd.current_dir(root())
            .arg("tests/harness/serve.mjs")
            .arg("--state")
            .arg(&state_dir)
            .args(["--var", &format!("CG_ADMIN={ADMIN_KEY}")])
            .args(["--var", &format!("CG_KEK={KEK_HEX}")])
            .args(["--var", &format!("{SECRET_NAME}={SECRET_VALUE}")])
            .args(["--var", "DEBUG_COUNTERS=true"])
            // The mocks speak plain http on 127.0.0.1; a test may pass "false" in `vars`.
            .args(["--var", "ALLOW_HTTP_UPSTREAMS=true"]);
        if keep {
            cmd.arg("--keep-state");
        }
        cmd.args(flags);
        for (k, v) in vars {
            cmd.args(["--var", &format!("{k}={v}")]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("node must be installed (make setup)");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let ready = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                let log = std::fs::read_to_string(state_dir.join("worker.log")).unwrap_or_default();
                panic!("the gateway did not start; its log:\n{log}")
            });
        let url: Value = serde_json::from_str(&ready).expect("ready line");
        let url = url["url"]
            .as_str()
            .expect("url")
            .trim_end_matches('/')
            .to_owned();
        Gateway {
            url,
            state_dir,
            control: Mutex::new((stdin, rx)),
            child,
            agent: agent(),
        }
    }

    /// Runs SQL against the worker's local D1 database, beside the worker.
    pub fn sql(&self, sql: &str, params: &[Value]) -> Vec<Value> {
        self.control(json!({"id": 1, "sql": sql, "params": params}))
    }

    /// Runs the worker's scheduled (cron) handler once, its `scheduledTime` at `at_ms`.
    pub fn scheduled(&self, at_ms: u64) {
        self.control(json!({"id": 1, "scheduled": at_ms}));
    }

    /// POSTs `body` to `path` of `tenant`'s ledger object directly, from outside the worker (as
    /// an isolate's retry would arrive); its status and body.
    pub fn ledger(&self, tenant: &str, path: &str, body: &str) -> (u16, String) {
        let rows = self.control(json!({"id": 1, "ledger": tenant, "path": path, "body": body}));
        let status = rows[0]["status"].as_u64().unwrap_or(0) as u16;
        (status, rows[0]["text"].as_str().unwrap_or("").to_owned())
    }

    fn control(&self, line: Value) -> Vec<Value> {
        let mut guard = self.control.lock().unwrap_or_else(|p| p.into_inner());
        let (stdin, rx) = &mut *guard;
        writeln!(stdin, "{line}").expect("write to harness");
        stdin.flush().expect("flush");
        let answer = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("harness answer");
        let answer: Value = serde_json::from_str(&answer).expect("harness json");
        if let Some(err) = answer.get("error") {
            panic!("sql failed: {err}");
        }
        answer["rows"].as_array().cloned().unwrap_or_default()
    }

    /// Sends a request and hands back the response with its body unread (for streams).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        bearer: Option<&str>,
        body: Option<&str>,
    ) -> ureq::http::Response<ureq::Body> {
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.url))
            .header("content-type", "application/json");
        if let Some(b) = bearer {
            req = req.header("authorization", format!("Bearer {b}"));
        }
        let req = req.body(body.unwrap_or("").to_owned()).expect("request");
        self.agent.run(req).expect("gateway reachable")
    }

    pub fn request(
        &self,
        method: &str,
        path: &str,
        bearer: Option<&str>,
        body: Option<&str>,
    ) -> Resp {
        let mut resp = self.send(method, path, bearer, body);
        let status = resp.status().as_u16();
        let headers = header_list(&resp);
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        Resp {
            status,
            headers,
            text,
        }
    }

    /// Streams `model` through the gateway with the official OpenAI Node SDK; its summary line.
    pub fn openai_sdk_stream(&self, key: &str, model: &str) -> Value {
        let out = Command::new("node")
            .current_dir(root())
            .args([
                "tests/harness/openai_stream.mjs",
                &format!("{}/v1", self.url),
                key,
                model,
            ])
            .output()
            .expect("node");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)))
    }

    pub fn admin(&self, method: &str, path: &str, body: Option<Value>) -> Resp {
        let body = body.map(|b| b.to_string());
        self.request(method, path, Some(ADMIN_KEY), body.as_deref())
    }
}

/// Polls until `f` holds: the gateway's clock is the runtime's, which a test cannot move.
/// Reads `f` until it says done or `within` has passed; the last reading either way.
pub fn poll<T>(within: Duration, mut f: impl FnMut() -> (T, bool)) -> T {
    let start = std::time::Instant::now();
    loop {
        let (value, done) = f();
        if done || start.elapsed() > within {
            return value;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

pub fn eventually(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
