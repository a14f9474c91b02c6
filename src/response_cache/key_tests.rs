use super::*;

fn input<'a>(tenant: &'a str, surface: &'a str, requested: &'a str, body: &'a str) -> KeyInput<'a> {
    KeyInput {
        tenant,
        generation: 1,
        scope: None,
        surface,
        requested,
        stream: None,
        headers: &[],
        body: body.as_bytes(),
    }
}

fn key_of(tenant: &str, surface: &str, requested: &str, body: &str) -> String {
    response_key(&input(tenant, surface, requested, body)).unwrap_or_default()
}

fn chat(body: &str) -> String {
    key_of("acme", "chat_completions", "fast", body)
}

const BASE: &str = r#"{"model":"fast","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"temperature":0.2,"tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"n":1,"seed":7,"response_format":{"type":"text"}}"#;

#[test]
fn every_field_that_can_change_the_answer_changes_the_key() {
    let base = chat(BASE);
    assert_eq!(base.len(), 64);
    let changed = [
        BASE.replace(r#""temperature":0.2"#, r#""temperature":0.3"#),
        BASE.replace(r#""name":"f""#, r#""name":"g""#),
        BASE.replace(r#""n":1"#, r#""n":2"#),
        BASE.replace(r#""seed":7"#, r#""seed":8"#),
        BASE.replace(r#""type":"text""#, r#""type":"json_object""#),
        BASE.replace("Be brief.", "Be long."),
        BASE.replace(r#""content":"Hi""#, r#""content":"Hi!""#),
        BASE.replace(r#""model":"fast""#, r#""model":"slow""#),
        BASE.replace(r#","n":1"#, ""),
        BASE.replace(r#"{"model""#, r#"{"max_tokens":5,"model""#),
    ];
    for body in &changed {
        assert_ne!(chat(body), base, "{body}");
    }
}

#[test]
fn the_tenant_the_surface_the_requested_name_and_answer_shaping_headers_change_the_key() {
    let base = chat(BASE);
    assert_ne!(key_of("other", "chat_completions", "fast", BASE), base);
    assert_ne!(key_of("acme", "responses", "fast", BASE), base);
    assert_ne!(key_of("acme", "chat_completions", "slow", BASE), base);
    let pinned = response_key(&KeyInput {
        headers: &[("X-CogniGate-Pin-Provider", "b")],
        ..input("acme", "chat_completions", "fast", BASE)
    });
    assert_ne!(pinned.as_deref(), Some(base.as_str()));
}

#[test]
fn the_tenants_generation_the_keys_scope_and_a_keyed_stream_change_the_key() {
    use crate::config::RouteName;
    let base = input("acme", "chat_completions", "fast", BASE);
    let key = |i: KeyInput<'_>| response_key(&i).unwrap_or_default();
    let plain = key(base);
    let names = |n: &[&str]| -> Vec<RouteName> {
        n.iter().filter_map(|n| RouteName::parse(n).ok()).collect()
    };
    let (m1, m2, both, both_reversed, none) = (
        names(&["m1"]),
        names(&["m2"]),
        names(&["m1", "m2"]),
        names(&["m2", "m1"]),
        names(&[]),
    );
    let differ = [
        key(KeyInput {
            generation: 2,
            ..base
        }),
        key(KeyInput {
            scope: Some(&m1),
            ..base
        }),
        key(KeyInput {
            scope: Some(&m2),
            ..base
        }),
        key(KeyInput {
            scope: Some(&both),
            ..base
        }),
        key(KeyInput {
            scope: Some(&none),
            ..base
        }),
        key(KeyInput {
            stream: Some(false),
            ..base
        }),
        key(KeyInput {
            stream: Some(true),
            ..base
        }),
    ];
    for (i, a) in differ.iter().enumerate() {
        assert_ne!(a, &plain, "{i}");
        for b in &differ[i + 1..] {
            assert_ne!(a, b);
        }
    }
    assert_eq!(
        key(KeyInput {
            scope: Some(&both),
            ..base
        }),
        key(KeyInput {
            scope: Some(&both_reversed),
            ..base
        }),
        "one scope whatever its order"
    );
}

#[test]
fn the_digest_of_a_bodys_fields_is_the_digest_of_the_body_as_sent() {
    let fields = [
        ("messages", r#"[{"role":"user","content":"Hi"}]"#),
        ("model", r#""fast""#),
        ("stream", "true"),
        ("temperature", "0.20"),
    ];
    let digest = body_digest(fields).unwrap();
    let base = input("acme", "chat_completions", "fast", "");
    let body = r#"{"temperature":2e-1,"model":"fast","messages":[{"content":"Hi","role":"user"}]}"#;
    assert_eq!(
        response_key(&KeyInput {
            body: body.as_bytes(),
            ..base
        }),
        Some(key_with_body(&base, &digest))
    );
}

#[test]
fn stream_stream_options_user_and_metadata_do_not_change_the_key() {
    let base = chat(BASE);
    let extra = BASE.replace(
        r#"{"model""#,
        r#"{"stream":true,"stream_options":{"include_usage":true},"user":"u1","metadata":{"a":"b"},"model""#,
    );
    assert_eq!(chat(&extra), base);
}

#[test]
fn ignored_fields_are_ignored_only_at_the_top_level() {
    let a = r#"{"model":"m","messages":[{"role":"user","content":"x","metadata":{"a":1}}]}"#;
    let b = r#"{"model":"m","messages":[{"role":"user","content":"x","metadata":{"a":2}}]}"#;
    assert_ne!(chat(a), chat(b));
}

#[test]
fn parts_are_length_prefixed_so_shifting_text_between_them_changes_the_key() {
    let body = r#"{"model":"m"}"#;
    assert_ne!(key_of("ab", "c", "m", body), key_of("a", "bc", "m", body));
}

#[test]
fn numbers_are_one_spelling_per_exact_value() {
    for (a, b) in [
        ("1", "1.0"),
        ("1", "1e0"),
        ("1", "1.00"),
        ("1", "10e-1"),
        ("100", "1E2"),
        ("0.5", "5e-1"),
        ("-0", "0"),
        ("0.000", "0e5"),
        ("1.5", "15E-1"),
    ] {
        assert_eq!(canonical_number(a), canonical_number(b), "{a} vs {b}");
    }
    for (a, b) in [
        ("1", "-1"),
        ("0.1", "0.11"),
        ("12345678901234567890", "12345678901234567891"),
        ("1e2", "1e3"),
    ] {
        assert_ne!(canonical_number(a), canonical_number(b), "{a} vs {b}");
    }
    assert_eq!(canonical_number("1.50"), "15e-1");
    assert_eq!(canonical_number("100"), "1e2");
}

#[test]
fn key_order_whitespace_and_string_escapes_do_not_change_the_key() {
    let a = r#"{"model":"m","messages":[{"role":"user","content":"A"}],"temperature":1}"#;
    let b = "{ \"temperature\" : 1.0,\n \"messages\": [ {\"content\":\"\\u0041\", \"role\":\"user\"} ], \"model\":\"m\" }";
    assert_eq!(chat(a), chat(b));
}

#[test]
fn a_body_that_is_not_json_has_no_key() {
    for body in ["{not json", "[1]", r#"{"a":[1,]}"#] {
        assert_eq!(
            response_key(&input("t", "chat_completions", "m", body)),
            None
        );
    }
}
