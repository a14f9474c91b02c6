//! A mock written in Python, as a process of the test stopped when dropped: the cloud platforms
//! whose wire rules need a vendor library to check (`tests/harness/bedrock_mock.py`: botocore
//! recomputes every SigV4 signature and streams are real AWS event-stream frames;
//! `tests/harness/vertex_mock.py`: PyJWT verifies every service-account assertion).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct PythonMock {
    child: Child,
    pub port: u16,
}

impl PythonMock {
    /// `tests/harness/{script}` with its JSON `config` (each script's docstring says what it
    /// takes).
    pub fn start(script: &str, config: &Value) -> Self {
        let mut child = Command::new("python3")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg(format!("tests/harness/{script}"))
            .arg(config.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 with the mocks' libraries (make setup installs them)");
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

    /// Pushes a rule (the script's docstring lists its rules).
    pub fn script(&self, rule: Value) {
        self.post("/__script", &rule);
    }

    /// The calls received, as the script records them.
    pub fn calls(&self) -> Vec<Value> {
        self.get("/__calls").as_array().cloned().unwrap_or_default()
    }

    /// A control route's JSON answer.
    pub fn get(&self, path: &str) -> Value {
        let agent = super::gateway::agent();
        let mut resp = agent
            .get(format!("{}{path}", self.url()))
            .call()
            .expect("the mock's control route");
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        serde_json::from_str::<Value>(&text).unwrap_or_default()
    }
}

impl Drop for PythonMock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
