//! Security at the edge of the gateway: provider keys sealed at rest and useless in another
//! tenant's row, Worker secrets referenced by name, and hostile input refused cleanly before
//! anything reaches an upstream.

use crate::support::gateway::{Gateway, ADMIN_KEY, SECRET_NAME, SECRET_VALUE};
use cognigate::mock::MockProvider;
use serde_json::json;

/// A request whose headers announce `length` body bytes that are never sent: the gateway must
/// refuse on the announcement alone.
fn announce_body(gw: &Gateway, key: &str, length: usize) -> String {
    use std::io::{Read, Write};
    let addr = gw.url.trim_start_matches("http://");
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        conn,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = conn.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&out).contains("}}") {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn provider_keys_are_sealed_at_rest_and_shown_only_by_id_and_last_four() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("sealed").unwrap();
    let t = gw.tenant("sealed");
    t.provider(
        "p",
        &mock.url(),
        &["sk-plaintext-never-stored-4321"],
        "failover",
    );
    t.model("m", "p", 1.0, 8000);
    let rows = gw.sql(
        "SELECT spec FROM providers WHERE tenant_id = ?1",
        &[json!(t.id)],
    );
    let spec = rows[0]["spec"].as_str().unwrap();
    assert!(!spec.contains("plaintext-never-stored"), "{spec}");
    assert!(spec.contains("\"sealed\":\"v1:"), "{spec}");
    let shown = gw.admin("GET", &t.path("/providers/p"), None);
    assert!(
        !shown.text.contains("plaintext") && !shown.text.contains("v1:"),
        "{}",
        shown.text
    );
    assert_eq!(shown.json()["keys"][0]["last4"], "4321");
    // Sealed, yet the gateway opens it to call upstream.
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), ["sk-plaintext-never-stored-4321"]);
}

#[test]
fn a_provider_row_copied_to_another_tenant_does_not_decrypt() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("copied").unwrap();
    let victim = gw.tenant("victim");
    victim.provider("p", &mock.url(), &["sk-victim-key"], "failover");
    let thief = gw.tenant("thief");
    let spec = gw.sql(
        "SELECT spec FROM providers WHERE tenant_id = ?1",
        &[json!(victim.id)],
    )[0]["spec"]
        .as_str()
        .unwrap()
        .to_owned();
    gw.sql(
        "INSERT INTO providers (tenant_id, name, spec, updated_at) VALUES (?1, 'p', ?2, 0)",
        &[json!(thief.id), json!(spec)],
    );
    thief.model("m", "p", 1.0, 8000);
    let r = thief.chat("m");
    assert_eq!(r.status, 503, "{}", r.text);
    assert_eq!(r.error_code().as_deref(), Some("no_candidates"));
    assert_eq!(mock.count(), 0, "the victim's key was never used");
    let log = gw.log_containing("provider keys unusable");
    assert!(log
        .lines()
        .any(|l| l.contains("provider keys unusable") && l.contains(&thief.id)));
    assert!(!log.contains("sk-victim-key"));
}

#[test]
fn a_key_may_reference_a_worker_secret_by_name() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("secretref").unwrap();
    let t = gw.tenant("secretref");
    let r = t.put_ok(
        "/providers/p",
        json!({"kind": "openai", "base_url": mock.url(), "keys": [{"secret": SECRET_NAME}]}),
    );
    assert_eq!(r.json()["keys"][0]["secret"], SECRET_NAME);
    t.model("m", "p", 1.0, 8000);
    assert_eq!(t.chat("m").status, 200);
    assert_eq!(mock.keys(), [SECRET_VALUE]);
    let r = t.put(
        "/providers/q",
        json!({"kind": "openai", "base_url": mock.url(), "keys": [{"secret": "CG_ADMIN"}]}),
    );
    assert_eq!(
        r.status, 400,
        "the admin secret must never be sent upstream: {}",
        r.text
    );
    assert!(!r.text.contains(ADMIN_KEY));
}

#[test]
fn hostile_chat_input_gets_a_clear_4xx_and_nothing_reaches_upstream() {
    let gw = Gateway::shared();
    let mock = MockProvider::start("hostile").unwrap();
    let t = gw.tenant("hostile");
    t.provider("p", &mock.url(), &["sk-h"], "failover");
    t.model("m", "p", 1.0, 8000);
    let answer = announce_body(gw, &t.key, 10 * 1024 * 1024 + 1);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:.200}");
    assert!(answer.contains("body_too_large"));
    let too_deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let cases: Vec<(String, u16, &str, Option<&str>)> = vec![
        ("{\"model\":".into(), 400, "invalid_json", None),
        ("[1,2,3]".into(), 400, "invalid_request", None),
        (too_deep, 400, "invalid_json", None),
        (
            r#"{"messages":[]}"#.into(),
            400,
            "missing_model",
            Some("model"),
        ),
        (r#"{"model":42}"#.into(), 400, "invalid_type", Some("model")),
        (
            r#"{"model":"m","stream":"yes"}"#.into(),
            400,
            "invalid_type",
            Some("stream"),
        ),
        (
            r#"{"model":"m","messages":"hello"}"#.into(),
            400,
            "invalid_type",
            Some("messages"),
        ),
        (
            r#"{"model":"m","max_tokens":"lots"}"#.into(),
            400,
            "invalid_type",
            Some("max_tokens"),
        ),
        ("\u{0}\u{1}binary".into(), 400, "invalid_json", None),
        (
            json!({"model": "m".repeat(257)}).to_string(),
            400,
            "invalid_request",
            Some("model"),
        ),
    ];
    for (body, status, code, param) in cases {
        let r = gw.request("POST", "/v1/chat/completions", Some(&t.key), Some(&body));
        assert_eq!(r.status, status, "{:.60}: {:.300}", body, r.text);
        assert_eq!(r.error_code().as_deref(), Some(code), "{:.60}", body);
        assert_eq!(r.json()["error"]["param"].as_str(), param, "{:.60}", body);
    }
    for auth in ["Basic dXNlcjpwYXNz", "Bearer", "cg_no_scheme"] {
        let req = ureq::http::Request::builder()
            .method("POST")
            .uri(format!("{}/v1/chat/completions", gw.url))
            .header("authorization", auth)
            .body(r#"{"model":"m"}"#.to_owned())
            .unwrap();
        let mut resp = crate::support::gateway::agent().run(req).unwrap();
        assert_eq!(resp.status().as_u16(), 401, "{auth}");
        assert!(resp
            .body_mut()
            .read_to_string()
            .unwrap()
            .contains("invalid_api_key"));
    }
    let r = gw.request("GET", "/v1/chat/completions", Some(&t.key), None);
    assert_eq!(r.status, 405);
    assert_eq!(
        r.header("allow"),
        Some("POST"),
        "a 405 says what is allowed"
    );
    let r = gw.request(
        "POST",
        &format!("/admin/v1/tenants/{}", t.id),
        Some(ADMIN_KEY),
        None,
    );
    assert_eq!((r.status, r.header("allow")), (405, Some("DELETE, GET")));
    // The runtime binding reads a method it does not know as GET; it must not get a GET's answer.
    for method in ["QUERY", "PROPFIND"] {
        let answer = raw_status_and_allow(gw, method, "/admin/v1/tenants");
        assert_eq!(answer, (405, Some("GET, POST".to_owned())), "{method}");
    }
    let r = gw.request("GET", "/admin/v1/tenants/%ZZ", Some(ADMIN_KEY), None);
    assert_eq!(r.status, 400);
    assert_eq!(mock.count(), 0);
    assert!(!gw.log().contains("panicked"), "no panic in the worker");
}

/// The status and `Allow` header of an admin request sent by hand: the HTTP client refuses
/// methods it does not know, and those are the point.
fn raw_status_and_allow(gw: &Gateway, method: &str, path: &str) -> (u16, Option<String>) {
    use std::io::{Read, Write};
    let host = gw.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {ADMIN_KEY}\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let mut lines = answer.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let allow = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(": "))
        .find(|(k, _)| k.eq_ignore_ascii_case("allow"))
        .map(|(_, v)| v.to_owned());
    (status, allow)
}
