//! The Bedrock mock (`tests/harness/bedrock_mock.py`: botocore recomputes every SigV4
//! signature, streams are real AWS event-stream frames) as a process of the test, stopped when
//! dropped.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct BedrockMock {
    child: Child,
    pub port: u16,
}

impl BedrockMock {
    /// `config`: `{"credentials": {"AKID": "secret"}, "api_keys": ["..."]}`.
    pub fn start(config: &Value) -> Self {
        let mut child = Command::new("python3")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("tests/harness/bedrock_mock.py")
            .arg(config.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 with botocore (make setup installs it)");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the mock's port");
        let port = line.trim().parse().expect("a port on the first line");
        Self { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn post(&self, path: &str, body: &Value) {
        let agent = super::gateway::agent();
        agent
            .post(format!("{}{path}", self.url()))
            .send(body.to_string())
            .expect("the mock's control route");
    }

    /// Pushes a rule: `{"times": 1, "error": "ThrottlingException"}`, `{"stream_exception":
    /// "throttlingException"}`, `{"text": "..."}`, optionally `"key": "<access key id>"`.
    pub fn script(&self, rule: Value) {
        self.post("/__script", &rule);
    }

    /// The calls received: `path`, `model`, `key` (access key id or `bearer`), `refused` (the
    /// error type a real endpoint would have refused the credentials with), `session_token`,
    /// `body`.
    pub fn calls(&self) -> Vec<Value> {
        let agent = super::gateway::agent();
        let mut resp = agent
            .get(format!("{}/__calls", self.url()))
            .call()
            .expect("the mock's calls");
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
    }
}

impl Drop for BedrockMock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
