//! The admin body parsers: strict reading, named fields, validation.

use super::*;
use crate::config::SettingsOverrides;

fn err_of<T: std::fmt::Debug>(r: Result<T, ConfigError>) -> String {
    r.err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn unknown_field_is_refused_and_named() {
    let e = err_of(parse_body::<TenantBody>(
        br#"{"id":"a","name":"A","colour":"red"}"#,
    ));
    assert!(e.contains("unknown field `colour`"), "{e}");
}

#[test]
fn wrong_type_names_the_nested_field() {
    let e = err_of(parse_body::<SettingsOverrides>(
        br#"{"breaker":{"window_ms":"soon"}}"#,
    ));
    assert!(e.starts_with("breaker.window_ms: invalid type"), "{e}");
}

#[test]
fn a_body_is_an_object_as_its_schema_says_never_an_array_by_position() {
    let e = err_of(parse_body::<TenantBody>(br#"["acme","Acme"]"#));
    assert_eq!(
        e,
        "body: invalid type: sequence, expected struct TenantBody"
    );
    let e = err_of(parse_body::<SettingsOverrides>(
        br#"{"breaker":[null,null]}"#,
    ));
    assert!(e.starts_with("breaker: invalid type: sequence"), "{e}");
    for keys in [r#"[["PROVIDER_X"]]"#, r#"[{"secret":"PROVIDER_X","x":1}]"#] {
        let body = format!(r#"{{"kind":"openai","base_url":"https://x/v1","keys":{keys}}}"#);
        assert!(
            parse_body::<ProviderBody>(body.as_bytes()).is_err(),
            "{keys}"
        );
    }
    let ok = parse_body::<ProviderBody>(
        br#"{"kind":"openai","base_url":"https://x/v1","keys":["sk",{"secret":"PROVIDER_X"}]}"#,
    );
    assert_eq!(ok.map(|b| b.keys.len()).ok(), Some(2));
}

#[test]
fn an_integer_written_with_a_zero_fraction_is_an_integer() {
    let o = parse_body::<SettingsOverrides>(br#"{"max_fallback_depth":17.0}"#);
    assert_eq!(o.ok().and_then(|o| o.max_fallback_depth), Some(17));
    let e = err_of(parse_body::<SettingsOverrides>(
        br#"{"max_fallback_depth":1.5}"#,
    ));
    assert!(e.starts_with("max_fallback_depth: invalid type"), "{e}");
}

#[test]
fn malformed_json_is_reported_as_such() {
    let e = err_of(parse_body::<TenantBody>(b"{\"id\":"));
    assert!(e.starts_with("body: malformed JSON"), "{e}");
}

#[test]
fn bad_name_inside_body_names_field_and_rule() {
    let e = err_of(parse_body::<TenantBody>(br#"{"id":"Acme!","name":"A"}"#));
    assert_eq!(e, "id: tenant id must start with a letter or digit");
}

#[test]
fn provider_needs_at_least_one_key() {
    let body =
        parse_body::<ProviderBody>(br#"{"kind":"openai","base_url":"https://x/v1","keys":[]}"#);
    let name = ProviderName::parse("openai");
    let r = body.and_then(|b| {
        name.map_err(|_| ConfigError::invalid("n", ""))
            .and_then(|n| b.validate(n))
    });
    assert_eq!(err_of(r), "keys: must list 1 to 64 keys");
}

#[test]
fn model_without_capabilities_is_a_chat_model() {
    let m = parse_body::<ModelBody>(br#"{"provider":"p","context_window":8000}"#)
        .and_then(|b| b.validate(ModelId::parse("m").map_err(|_| ConfigError::invalid("", ""))?));
    let m = m.ok();
    assert_eq!(m.as_ref().map(|m| m.upstream_model.as_str()), Some("m"));
    assert_eq!(
        m.map(|m| m
            .capabilities
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()),
        Some(vec!["chat".to_owned()])
    );
}

#[test]
fn negative_price_is_refused() {
    let m = parse_body::<ModelBody>(
        br#"{"provider":"p","context_window":8000,"input_price_per_mtok":-1}"#,
    )
    .and_then(|b| b.validate(ModelId::parse("m").map_err(|_| ConfigError::invalid("", ""))?));
    assert_eq!(
        err_of(m),
        "input_price_per_mtok: must be a price from 0 to 1000000"
    );
}

#[test]
fn a_cached_input_price_is_kept_and_checked_like_the_other_prices() {
    let model = |body: &str| {
        parse_body::<ModelBody>(body.as_bytes()).and_then(|b| {
            b.validate(ModelId::parse("m").map_err(|_| ConfigError::invalid("", ""))?)
        })
    };
    let m = model(r#"{"provider":"p","context_window":8000,"cached_input_price_per_mtok":0.5}"#);
    assert_eq!(
        m.ok().and_then(|m| m.cached_input_price_per_mtok),
        Some(0.5)
    );
    let m = model(r#"{"provider":"p","context_window":8000}"#);
    assert_eq!(m.ok().map(|m| m.cached_input_price_per_mtok), Some(None));
    let m = model(r#"{"provider":"p","context_window":8000,"cached_input_price_per_mtok":-1}"#);
    assert_eq!(
        err_of(m),
        "cached_input_price_per_mtok: must be a price from 0 to 1000000"
    );
}

#[test]
fn cache_write_prices_are_checked_like_the_other_prices_and_default_to_1_25_and_2_times_input() {
    let model = |body: &str| {
        parse_body::<ModelBody>(body.as_bytes()).and_then(|b| {
            b.validate(ModelId::parse("m").map_err(|_| ConfigError::invalid("", ""))?)
        })
    };
    let m = model(r#"{"provider":"p","context_window":8000,"input_price_per_mtok":4}"#).unwrap();
    assert_eq!(
        (
            m.cache_write_price_per_mtok,
            m.cache_write_1h_price_per_mtok
        ),
        (None, None),
        "unset stays unset: the default follows the input price"
    );
    assert_eq!(
        (m.cache_write_price(), m.cache_write_1h_price()),
        (5.0, 8.0)
    );
    let m = model(
        r#"{"provider":"p","context_window":8000,"input_price_per_mtok":4,"cache_write_price_per_mtok":4.5,"cache_write_1h_price_per_mtok":6}"#,
    )
    .unwrap();
    assert_eq!(
        (m.cache_write_price(), m.cache_write_1h_price()),
        (4.5, 6.0)
    );
    for field in [
        "cache_write_price_per_mtok",
        "cache_write_1h_price_per_mtok",
    ] {
        let body = format!(r#"{{"provider":"p","context_window":8000,"{field}":-1}}"#);
        assert_eq!(
            err_of(model(&body)),
            format!("{field}: must be a price from 0 to 1000000")
        );
    }
}

#[test]
fn upstream_model_and_key_lengths_count_characters_as_their_messages_say() {
    let model = |upstream: &str| {
        let body =
            serde_json::json!({"provider": "p", "context_window": 8, "upstream_model": upstream});
        parse_body::<ModelBody>(body.to_string().as_bytes()).and_then(|b| {
            b.validate(ModelId::parse("m").map_err(|_| ConfigError::invalid("", ""))?)
        })
    };
    assert!(model(&"é".repeat(256)).is_ok(), "256 characters, 512 bytes");
    assert_eq!(
        err_of(model(&"é".repeat(257))),
        "upstream_model: must be 1 to 256 printable characters"
    );
    let provider = |key: &str| {
        let body = serde_json::json!({"kind": "openai", "base_url": "https://x/v1", "keys": [key]});
        parse_body::<ProviderBody>(body.to_string().as_bytes()).and_then(|b| {
            b.validate(ProviderName::parse("p").map_err(|_| ConfigError::invalid("", ""))?)
        })
    };
    assert!(provider(&"é".repeat(1024)).is_ok());
    assert_eq!(
        err_of(provider(&"é".repeat(1025))),
        "keys: each key must be 1 to 1024 characters"
    );
}

#[test]
fn a_model_naming_itself_as_its_fallback_model_is_refused_and_any_other_id_is_kept() {
    let id = ModelId::parse("a").unwrap();
    let body = br#"{"provider":"p","context_window":8000,"fallback_model":"a"}"#;
    let e = err_of(parse_body::<ModelBody>(body).and_then(|b| b.validate(id.clone())));
    assert!(e.starts_with("fallback_model: "), "{e}");
    let body = br#"{"provider":"p","context_window":8000,"fallback_model":"not-yet"}"#;
    let m = parse_body::<ModelBody>(body).and_then(|b| b.validate(id));
    assert_eq!(
        m.ok().and_then(|m| m.fallback_model).map(|l| l.to_string()),
        Some("not-yet".to_owned())
    );
}

#[test]
fn prefer_platforms_refuses_an_unknown_platform_a_duplicate_or_an_empty_list_naming_the_field() {
    let alias =
        |json: &str| err_of(parse_body::<AliasBody>(json.as_bytes()).and_then(AliasBody::validate));
    let unknown = alias(r#"{"prefer_platforms":["direct","moon"]}"#);
    assert!(
        unknown.starts_with("prefer_platforms: unknown platform 'moon'"),
        "{unknown}"
    );
    let twice = alias(r#"{"prefer_platforms":["azure","azure"]}"#);
    assert!(
        twice.contains("prefer_platforms") && twice.contains("azure"),
        "{twice}"
    );
    assert!(alias(r#"{"prefer_platforms":[]}"#).contains("prefer_platforms"));
    let rule = |extra: &str| {
        let json = format!(r#"{{"match":"x","chain":["m"]{extra}}}"#);
        err_of(parse_body::<RuleBody>(json.as_bytes()).and_then(|b| b.validate(5)))
    };
    assert!(rule(r#","prefer_platforms":[]"#).contains("prefer_platforms"));
    assert!(rule(r#","prefer_platforms":["bedrock","bedrock"]"#).contains("prefer_platforms"));
    assert!(rule(r#","prefer_platforms":["moon"]"#).starts_with("prefer_platforms: unknown"));
    let ok = parse_body::<RuleBody>(br#"{"match":"x","chain":["m"],"prefer_platforms":["direct","bedrock","vertex","azure","custom"]}"#);
    assert!(ok.and_then(|b| b.validate(5)).is_ok());
}
