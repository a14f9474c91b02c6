use super::*;
use crate::config::admin_body::{parse_body, ProviderBody};
use crate::config::cloud_key::tests::account;
use crate::config::{Defaults, ProviderName};

fn stored(name: &str, body: serde_json::Value, kek: &Kek) -> StoredProvider {
    let body: ProviderBody = parse_body(body.to_string().as_bytes()).unwrap();
    let provider = body.validate(ProviderName::parse(name).unwrap()).unwrap();
    provider
        .seal(&TenantId::parse("acme").unwrap(), Some(kek), || {
            Some([9; 12])
        })
        .unwrap()
}

fn rows(providers: Vec<StoredProvider>) -> ConfigRows {
    ConfigRows {
        settings: SettingsOverrides::default(),
        health_mode: None,
        providers,
        models: Vec::new(),
        aliases: Vec::new(),
        rules: Vec::new(),
    }
}

fn assemble(rows: ConfigRows, kek: &Kek, allow_http: bool) -> (TenantConfig, Vec<LeftOut>) {
    let opening = Opening {
        kek: Some(kek),
        allow_http,
        secret: &|_| None,
    };
    let tenant = TenantId::parse("acme").unwrap();
    rows.assemble(
        &tenant,
        &opening,
        Defaults::default().effective(&SettingsOverrides::default()),
    )
}

fn names(config: &TenantConfig) -> Vec<String> {
    config.providers.keys().map(|p| p.to_string()).collect()
}

#[test]
fn a_provider_stored_over_plain_http_is_left_out_unless_the_deployment_allows_http() {
    let kek = Kek::from_hex(&"22".repeat(32)).unwrap();
    let providers = || {
        vec![
            stored(
                "tls",
                serde_json::json!({"kind": "openai", "base_url": "https://a.example/v1", "keys": ["sk-a"]}),
                &kek,
            ),
            stored(
                "plain",
                serde_json::json!({"kind": "openai", "base_url": "http://10.0.0.9/v1", "keys": ["sk-b"]}),
                &kek,
            ),
        ]
    };
    let (config, left_out) = assemble(rows(providers()), &kek, false);
    assert_eq!(names(&config), ["tls"]);
    assert!(
        matches!(&left_out[..], [LeftOut::Transport { provider, .. }] if provider.as_str() == "plain")
    );
    let (config, left_out) = assemble(rows(providers()), &kek, true);
    assert_eq!(names(&config), ["plain", "tls"]);
    assert!(left_out.is_empty());
}

#[test]
fn a_service_account_whose_token_uri_is_plain_http_is_left_out_unless_the_deployment_allows_http() {
    let kek = Kek::from_hex(&"22".repeat(32)).unwrap();
    let plain = account("").replace("https://oauth2.googleapis.com", "http://127.0.0.1:9");
    let vertex = || {
        stored(
            "vx",
            serde_json::json!({"kind": "vertex", "base_url": "https://us-east5-aiplatform.googleapis.com",
                "project": "p", "region": "us-east5", "publisher": "anthropic",
                "keys": [plain.clone(), account("")]}),
            &kek,
        )
    };
    let (config, left_out) = assemble(rows(vec![vertex()]), &kek, false);
    let keys = config.providers.values().next().map(|p| p.keys.len());
    assert_eq!(keys, Some(1), "the https account stays");
    match &left_out[..] {
        [LeftOut::Keys { problems, .. }] => {
            assert!(
                problems[0].contains("token_uri is plain http"),
                "{problems:?}"
            );
            assert!(!problems[0].contains("PRIVATE KEY"), "no key in the log");
        }
        _ => panic!("one key left out"),
    }
    let (config, left_out) = assemble(rows(vec![vertex()]), &kek, true);
    assert_eq!(
        config.providers.values().next().map(|p| p.keys.len()),
        Some(2)
    );
    assert!(left_out.is_empty());
}
