//! The metrics scrape as prometheus-client's own parser reads it (`tests/harness/prom_parse.py`):
//! the tests hold the text to the exposition format through a real client, not a regex.

use super::gateway::Gateway;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

/// `GET /admin/v1/metrics`: the raw text and its parse, `{"families": {name: type}, "samples":
/// [...]}`. A text the parser refuses fails the test.
pub fn scrape(gw: &Gateway) -> (String, Value) {
    let r = gw.admin("GET", "/admin/v1/metrics", None);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/harness/prom_parse.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(r.text.as_bytes()).expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("python3 ran");
    assert!(
        out.status.success(),
        "the text must parse: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        r.text
    );
    let parsed = serde_json::from_slice(&out.stdout).expect("the parser's JSON");
    (r.text, parsed)
}

/// The sum of the samples `name` whose labels include every pair of `labels` (0 if none).
pub fn value(parsed: &Value, name: &str, labels: &[(&str, &str)]) -> f64 {
    parsed["samples"]
        .as_array()
        .map(|s| s.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|s| s["name"] == name)
        .filter(|s| labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .map(|s| s["value"].as_f64().unwrap_or(0.0))
        .sum()
}
