//! The official Python SDKs (`anthropic`, `openai`, installed by `.ci/setup`) as clients of the
//! gateway: each scenario in `tests/harness/*_sdk.py` prints one JSON summary line.

use super::gateway::Tenant;
use serde_json::Value;
use std::process::Command;

pub fn python(script: &str, args: &[&str]) -> Value {
    let out = Command::new("python3")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg(format!("tests/harness/{script}"))
        .args(args)
        .output()
        .expect("python3 (make setup installs the SDKs)");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(v["ok"], true, "{v}");
    v
}

pub fn anthropic_sdk(t: &Tenant<'_>, model: &str, scenario: &str) -> Value {
    python("anthropic_sdk.py", &[&t.gw.url, &t.key, model, scenario])
}

pub fn openai_sdk(t: &Tenant<'_>, model: &str, scenario: &str, extra: &[&str]) -> Value {
    let base = format!("{}/v1", t.gw.url);
    let mut args = vec![base.as_str(), &t.key, model, scenario];
    args.extend_from_slice(extra);
    python("openai_sdk.py", &args)
}
