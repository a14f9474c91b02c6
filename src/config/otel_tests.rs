use super::*;

const KEK: &str = "4f1c0b7e9a2d3c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6";

fn parse(body: &str) -> OtelSettings {
    serde_json::from_str(body).unwrap()
}

fn tenant() -> TenantId {
    TenantId::parse("acme").unwrap()
}

#[test]
fn otel_defaults_to_json_every_trace_and_no_content() {
    let o = parse(r#"{"endpoint":"https://otel.example.com/v1/traces"}"#);
    assert_eq!(o.protocol, OtelProtocol::HttpJson);
    assert_eq!(o.sample_ratio, 1.0);
    assert!(!o.capture_content);
    assert!(o.validate(false).is_ok());
    let p = parse(r#"{"endpoint":"https://o.example/v1/traces","protocol":"http/protobuf"}"#);
    assert_eq!(p.protocol.content_type(), "application/x-protobuf");
}

#[test]
fn the_endpoint_is_https_on_a_public_host_unless_the_deployment_allows_http() {
    for url in [
        "http://otel.example.com/v1/traces",
        "https://127.0.0.1:4318/v1/traces",
    ] {
        let o = parse(&format!(r#"{{"endpoint":"{url}"}}"#));
        let e = o.validate(false).unwrap_err();
        assert_eq!(e.field(), Some("otel.endpoint"), "{url}");
        assert!(o.validate(true).is_ok(), "{url}");
    }
    let bad = serde_json::from_str::<OtelSettings>(r#"{"endpoint":"https://x/#f"}"#);
    assert!(bad.unwrap_err().to_string().contains("otel.endpoint"));
}

#[test]
fn each_refusal_names_its_field() {
    let cases = [
        (r#""sample_ratio":1.5"#, "otel.sample_ratio"),
        (r#""headers":{"bad name":"v"}"#, "otel.headers.bad name"),
        (
            r#""headers":{"traceparent":"v"}"#,
            "otel.headers.traceparent",
        ),
        (r#""headers":{"x-key":""}"#, "otel.headers.x-key"),
        (
            r#""headers":{"x-key":{"secret":"CG_KEK"}}"#,
            "otel.headers.x-key",
        ),
        (
            r#""headers":{"x-key":{"sealed":"v1:00:00"}}"#,
            "otel.headers.x-key",
        ),
    ];
    for (field, path) in cases {
        let o = parse(&format!(
            r#"{{"endpoint":"https://o.example/v1/traces",{field}}}"#
        ));
        let e = o.validate(false).unwrap_err();
        assert_eq!(e.field(), Some(path), "{field}");
    }
    let unknown = r#"{"endpoint":"https://o.example/v1/traces","sampler":"always"}"#;
    assert!(serde_json::from_str::<OtelSettings>(unknown).is_err());
}

#[test]
fn a_literal_header_is_sealed_when_written_never_shown_and_opened_with_the_config() {
    let kek = Kek::from_hex(KEK).unwrap();
    let o = parse(
        r#"{"endpoint":"https://o.example/v1/traces",
            "headers":{"x-honeycomb-team":"hc-secret-value","authorization":{"secret":"PROVIDER_OTEL"}}}"#,
    );
    assert!(o.validate(false).is_ok());
    assert_eq!(o.literals(), 1);
    let stored = o.sealed(Some(&kek), &tenant(), vec![[7; 12]]).unwrap();
    let text = serde_json::to_string(&stored).unwrap();
    assert!(!text.contains("hc-secret-value"), "{text}");
    assert!(text.contains(r#""sealed":"v1:"#), "{text}");
    let shown = serde_json::to_string(&stored.shown()).unwrap();
    assert!(
        !shown.contains("hc-secret-value") && !shown.contains("v1:"),
        "{shown}"
    );
    assert!(
        shown.contains(r#""x-honeycomb-team":{"sealed":true}"#),
        "{shown}"
    );
    assert!(
        shown.contains(r#""authorization":{"secret":"PROVIDER_OTEL"}"#),
        "{shown}"
    );
    let secret = |n: &str| (n == "PROVIDER_OTEL").then(|| "Bearer t".to_owned());
    let export = stored.open(&tenant(), Some(&kek), false, &secret).unwrap();
    assert_eq!(
        export.headers,
        vec![
            ("authorization".to_owned(), "Bearer t".to_owned()),
            ("x-honeycomb-team".to_owned(), "hc-secret-value".to_owned()),
        ]
    );
    assert!(!format!("{export:?}").contains("hc-secret-value"));
}

#[test]
fn a_sealed_header_opens_only_for_its_tenant_and_name_and_a_missing_secret_leaves_the_export_out() {
    let kek = Kek::from_hex(KEK).unwrap();
    let o = parse(r#"{"endpoint":"https://o.example/v1/traces","headers":{"x-a":"v"}}"#);
    let stored = o.sealed(Some(&kek), &tenant(), vec![[1; 12]]).unwrap();
    let none = |_: &str| None;
    let other = TenantId::parse("other").unwrap();
    assert!(stored.open(&other, Some(&kek), false, &none).is_err());
    assert!(stored.open(&tenant(), None, false, &none).is_err());
    let secret = parse(
        r#"{"endpoint":"https://o.example/v1/traces","headers":{"x-a":{"secret":"PROVIDER_GONE"}}}"#,
    );
    let why = secret
        .open(&tenant(), Some(&kek), false, &none)
        .unwrap_err();
    assert!(why.contains("PROVIDER_GONE"), "{why}");
    let literal = parse(r#"{"endpoint":"https://o.example/v1/traces","headers":{"x-a":"v"}}"#);
    let e = literal.sealed(None, &tenant(), vec![[1; 12]]).unwrap_err();
    assert_eq!(e.field(), Some("otel.headers.x-a"));
}
