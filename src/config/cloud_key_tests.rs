use super::*;

/// A PEM whose body is a DER SEQUENCE: the shape checked when written (the runtime's import
/// checks the rest when the key is first used).
fn pem() -> String {
    let mut der = vec![0x30u8, 0x82, 0x01, 0x00];
    der.extend(std::iter::repeat_n(7u8, 1_200));
    let b64 = encode(&der);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    )
}

fn encode(bytes: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A service-account file as Google ships it, without the field `skip`.
pub(crate) fn account(skip: &str) -> String {
    let mut v = serde_json::json!({
        "type": "service_account",
        "project_id": "p",
        "private_key_id": "abc",
        "private_key": pem(),
        "client_email": "gw@p.iam.gserviceaccount.com",
        "token_uri": "https://oauth2.googleapis.com/token",
    });
    if let Some(o) = v.as_object_mut() {
        o.remove(skip);
    }
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn a_service_account_file_is_a_vertex_key_whitespace_and_all() {
    let file = account("");
    assert!(file.len() > 1024 && file.contains('\n'));
    let key = ProviderKey::of_kind(ProviderKind::Vertex, 0, file.clone()).unwrap();
    assert_eq!(key.secret.expose(), file);
    assert_eq!(
        account_of(ProviderKind::Vertex, &file).as_deref(),
        Some("gw@p.iam.gserviceaccount.com")
    );
}

#[test]
fn a_service_account_missing_a_field_is_a_400_naming_it() {
    for field in ["client_email", "private_key", "token_uri"] {
        let e = ProviderKey::of_kind(ProviderKind::Vertex, 1, account(field)).unwrap_err();
        assert_eq!(e.field(), Some(format!("keys[1].{field}").as_str()));
    }
}

#[test]
fn a_private_key_that_is_not_pkcs8_pem_is_refused() {
    let file = account("").replace("BEGIN PRIVATE KEY", "BEGIN RSA PRIVATE KEY");
    let e = ProviderKey::of_kind(ProviderKind::Vertex, 0, file).unwrap_err();
    assert_eq!(e.field(), Some("keys[0].private_key"));
    assert!(pkcs8_der("-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----").is_none());
}

#[test]
fn a_value_starting_with_a_brace_that_is_no_json_is_refused() {
    let e = ProviderKey::of_kind(ProviderKind::Vertex, 0, "{not json".into()).unwrap_err();
    assert_eq!(e.field(), Some("keys"));
}

#[test]
fn a_vertex_api_key_is_a_plain_token() {
    assert!(ProviderKey::of_kind(ProviderKind::Vertex, 0, "AQ.Ab8RN6express".into()).is_ok());
    assert!(ProviderKey::of_kind(ProviderKind::Vertex, 0, "has space".into()).is_err());
}

#[test]
fn only_a_vertex_key_may_be_a_long_file() {
    let long = "x".repeat(2_000);
    assert!(ProviderKey::of_kind(ProviderKind::Openai, 0, long.clone()).is_err());
    assert!(ProviderKey::of_kind(ProviderKind::Bedrock, 0, format!("AKID:{long}")).is_ok());
}

#[test]
fn a_bedrock_key_is_an_access_key_pair_with_an_optional_token_or_an_api_key() {
    let pair = "AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    assert!(ProviderKey::of_kind(ProviderKind::Bedrock, 0, pair.into()).is_ok());
    let with_token = format!("{pair}:IQoJb3JpZ2luX2VjEXAMPLETOKEN");
    assert!(ProviderKey::of_kind(ProviderKind::Bedrock, 0, with_token.clone()).is_ok());
    assert_eq!(
        account_of(ProviderKind::Bedrock, &with_token).as_deref(),
        Some("AKIDEXAMPLE")
    );
    assert!(ProviderKey::of_kind(ProviderKind::Bedrock, 0, "ABSKbedrockapikey".into()).is_ok());
    assert_eq!(account_of(ProviderKind::Bedrock, "ABSKbedrockapikey"), None);
    for bad in [":secret", "AKID:", "AKID:secret:"] {
        let e = ProviderKey::of_kind(ProviderKind::Bedrock, 0, bad.into()).unwrap_err();
        assert_eq!(e.field(), Some("keys"), "{bad}");
    }
}
