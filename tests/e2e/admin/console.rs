//! The console page, end to end: served by the worker under a same-origin CSP, and
//! driven in Debian's chromium (headless, through puppeteer-core: `tests/harness/console_browser.mjs`).
//! The screenshots are kept under `target/console/`.

use crate::support::gateway::{Gateway, Tenant, ADMIN_KEY};
use cognigate::mock::{MockProvider, Reply, Rule};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

#[test]
fn the_console_is_one_public_page_whose_script_and_style_come_from_its_own_origin_under_a_csp() {
    let gw = Gateway::shared();
    for (path, kind) in [
        ("/console", "text/html"),
        ("/console/app.js", "text/javascript"),
        ("/console/app.css", "text/css"),
    ] {
        let r = gw.request("GET", path, None, None);
        assert_eq!(r.status, 200, "{path} needs no credential: {}", r.text);
        assert!(
            r.header("content-type").unwrap().starts_with(kind),
            "{path}"
        );
        assert_eq!(r.header("content-security-policy"), Some(CSP), "{path}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert!(r.header("cache-control").is_some(), "{path}");
        // The one absolute URL is SVG's namespace name, which is never fetched.
        let text = r.text.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !text.contains("http://") && !text.contains("https://"),
            "{path}: another origin"
        );
    }
    let page = gw.request("GET", "/console", None, None).text;
    assert!(page.contains(r#"<script src="/console/app.js" defer></script>"#));
    assert!(page.contains(r#"name="viewport""#), "usable on a phone");
    assert!(
        page.contains(r#"type="password""#),
        "the key goes into a password field"
    );
    assert!(
        !page.contains("<style") && !page.contains(" style="),
        "no inline style"
    );
    let script = gw.request("GET", "/console/app.js", None, None).text;
    assert!(!script.contains("innerHTML") && !script.contains("insertAdjacentHTML"));
    let post = gw.request("POST", "/console", None, Some("{}"));
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET"));
}

/// A tenant whose name is markup (the page must show it as text), `p` serving `flaky` (the
/// breaker this test trips) and `q` with two keys, the first parked by a 429 for ten minutes
/// (keys of 16 characters or more, so the admin API shows their last four).
fn console_tenant<'g>(gw: &'g Gateway, main: &MockProvider, other: &MockProvider) -> Tenant<'g> {
    let id = format!("console-{}", std::process::id());
    let name = r#"<b id="injected">Acme</b> & co"#;
    let r = gw.admin(
        "POST",
        "/admin/v1/tenants",
        Some(json!({"id": id, "name": name})),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let r = gw.admin("POST", &format!("/admin/v1/tenants/{id}/api-keys"), None);
    let key = r.json()["key"].as_str().unwrap().to_owned();
    let t = Tenant { gw, id, key };
    t.put_ok(
        "/settings",
        json!({"breaker": {"error_threshold": 3, "window_ms": 30000, "open_duration_ms": 600000}}),
    );
    t.provider("p", &main.url(), &["sk-main-0000-1234"], "failover");
    t.provider(
        "q",
        &other.url(),
        &["sk-other-0000-aaaa", "sk-other-0000-bbbb"],
        "failover",
    );
    t.model("flaky", "p", 1.0, 8000);
    t.model("steady", "q", 1.0, 8000);
    assert_eq!(t.rule("chain", &["flaky", "steady"]).status, 200);
    other.push(
        Rule::any(Reply::status(429).header("Retry-After", "600"))
            .key("sk-other-0000-aaaa")
            .times(1),
    );
    assert_eq!(t.chat("steady").status, 200, "served by the second key");
    t
}

fn browse(config: &Value) -> Value {
    let out = Command::new("node")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tests/harness/console_browser.mjs", &config.to_string()])
        .output()
        .expect("node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|_| {
        panic!(
            "console_browser.mjs: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn in_headless_chromium_the_console_shows_a_tripped_breaker_open_with_its_time_left() {
    let gw = Gateway::shared();
    let main = MockProvider::start("console-main").unwrap();
    let other = MockProvider::start("console-other").unwrap();
    let t = console_tenant(gw, &main, &other);
    let parked_key = gw.admin("GET", &t.path("/providers/q"), None).json()["keys"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    main.push(Rule::any(Reply::status(503)).model("flaky").times(3));
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console");
    let _ = std::fs::remove_file(shots.join("console.png"));
    let seen = browse(&json!({
        "url": gw.url.trim_end_matches('/'),
        "admin_key": ADMIN_KEY,
        "caller_key": t.key,
        "tenant": t.id,
        "trip_model": "flaky",
        "trips": 3,
        "breaker": "p/flaky",
        "parked": format!("q/{parked_key}"),
        "screenshots": shots,
    }));
    assert!(seen["error"].is_null(), "the browser run failed: {seen:#}");
    assert_eq!(seen["status"], 200);
    assert_eq!(seen["csp"], CSP);

    // A wrong key: a clear message, nothing kept, nothing shown.
    assert_eq!(
        seen["wrong_key_message"],
        "The admin key was refused (401)."
    );
    assert!(seen["wrong_key_kept"].is_null(), "{seen}");
    assert_eq!(seen["main_hidden_after_wrong_key"], true);

    // The key is kept in sessionStorage; API text is text, never markup.
    assert_eq!(seen["key_kept"], ADMIN_KEY);
    assert_eq!(
        seen["injected_element"], false,
        "the tenant name was parsed as HTML"
    );
    assert!(
        seen["tenant_option"]
            .as_str()
            .unwrap()
            .contains(r#"<b id="injected">Acme</b> & co"#),
        "{seen}"
    );

    // The breaker: closed before, open with its time left after three 503s.
    assert_eq!(seen["open_before_trip"], json!([]), "{seen}");
    assert_eq!(seen["trip_statuses"], json!([502, 502, 502]));
    assert_eq!(seen["breaker"]["state"], "open", "{seen}");
    let left = seen["breaker"]["left"].as_str().unwrap();
    assert!(
        left.starts_with("9 min ") || left == "10 min 00 s left",
        "ten minutes open, counting down: {left}"
    );
    assert!(left.ends_with(" s left"), "{left}");
    assert_ne!(
        seen["breaker"]["left"], seen["breaker_later"]["left"],
        "it counts down"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let until = seen["breaker"]["until"].as_u64().unwrap();
    assert!(until > now && until <= now + 600_000, "{until} vs {now}");
    assert!(
        seen["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().contains("opened p/flaky")),
        "the timeline shows the transition: {seen}"
    );

    // Parked keys by id and last four, the rules view, the usage chart.
    let parked = seen["parked_row"].as_str().unwrap();
    assert!(
        parked.contains("…aaaa") && parked.contains("min"),
        "{parked}"
    );
    assert!(!parked.contains("sk-other"), "never a secret: {parked}");
    let rules = seen["rules_text"].as_str().unwrap();
    assert!(rules.contains("chain") && rules.contains("flaky") && rules.contains("steady"));
    assert!(seen["usage_bars"].as_u64().unwrap() >= 1, "{seen}");

    // No CSP violation, no script error, no other origin; usable on a phone.
    assert_eq!(seen["violations"], json!([]), "CSP violations");
    assert_eq!(seen["page_errors"], json!([]), "script errors");
    let origins: Vec<&str> = seen["origins"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|o| *o != "null" && !gw.url.starts_with(o))
        .collect();
    assert!(origins.is_empty(), "another origin was loaded: {origins:?}");
    assert!(seen["phone_overflow"].as_i64().unwrap() <= 0, "{seen}");
    let png = std::fs::metadata(shots.join("console.png")).unwrap();
    assert!(png.len() > 10_000, "a screenshot is kept: {png:?}");
}
