use super::*;
use crate::config::base64::decode;
use crate::config::cloud_key::tests::account;

fn part(signing_input: &str, i: usize) -> serde_json::Value {
    let b64 = signing_input.split('.').nth(i).unwrap();
    // base64url without padding → standard with padding, for the strict decoder.
    let mut std: String = b64.replace('-', "+").replace('_', "/");
    while !std.len().is_multiple_of(4) {
        std.push('=');
    }
    serde_json::from_slice(&decode(std.as_bytes()).unwrap()).unwrap()
}

#[test]
fn the_assertion_names_the_account_as_issuer_its_token_uri_as_audience_and_the_cloud_scope() {
    let a = Assertion::of(&account(""), 1_700_000_000).unwrap();
    assert_eq!(a.token_uri, "https://oauth2.googleapis.com/token");
    assert_eq!(
        part(&a.signing_input, 0),
        serde_json::json!({"alg": "RS256", "typ": "JWT"})
    );
    let claims = part(&a.signing_input, 1);
    assert_eq!(claims["iss"], "gw@p.iam.gserviceaccount.com");
    assert_eq!(claims["aud"], "https://oauth2.googleapis.com/token");
    assert_eq!(claims["scope"], SCOPE);
    assert_eq!(claims["iat"], 1_700_000_000u64);
    assert_eq!(claims["exp"], 1_700_003_600u64);
    assert_eq!(a.der.first(), Some(&0x30));
    let form = a.form(&[0xfb, 0xff]);
    assert_eq!(
        form,
        format!(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={}.-_8",
            a.signing_input
        )
    );
}

#[test]
fn a_key_that_is_no_service_account_has_no_assertion() {
    assert!(matches!(
        Assertion::of("an-api-key", 0),
        Err(TokenError::NotAnAccount)
    ));
}

#[test]
fn a_refused_exchange_names_only_the_endpoints_error_code() {
    let body = br#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#;
    assert_eq!(
        read_token(400, body, 0).err(),
        Some(TokenError::Refused {
            status: 400,
            error: "invalid_grant".into()
        })
    );
    let odd = br#"{"error":"secret sk-123 leaked here"}"#;
    let e = read_token(401, odd, 0).err().unwrap();
    assert!(!e.to_string().contains("sk-123"), "{e}");
    assert_eq!(read_token(200, b"{}", 0).err(), Some(TokenError::Malformed));
    assert_eq!(
        read_token(200, br#"{"access_token":"","expires_in":3599}"#, 0).err(),
        Some(TokenError::Malformed)
    );
    let t = read_token(
        200,
        br#"{"access_token":"ya29.x","expires_in":3599}"#,
        1_000,
    )
    .unwrap();
    assert_eq!(
        (t.access_token.as_str(), t.expires_at_ms),
        ("ya29.x", 3_600_000)
    );
}

fn token(name: &str, expires_at_ms: u64) -> Token {
    Token {
        access_token: name.into(),
        expires_at_ms,
    }
}

#[test]
fn a_token_is_used_until_five_minutes_before_it_expires() {
    let mut cache = TokenCache::default();
    cache.keep("file-a", token("ya29.a", 3_600_000), 0);
    assert_eq!(cache.fresh("file-a", 0).as_deref(), Some("ya29.a"));
    let edge = 3_600_000 - REFRESH_BEFORE_MS;
    assert_eq!(cache.fresh("file-a", edge - 1).as_deref(), Some("ya29.a"));
    assert_eq!(cache.fresh("file-a", edge), None);
}

#[test]
fn a_token_goes_only_to_a_holder_of_the_same_service_account_file() {
    let mut cache = TokenCache::default();
    cache.keep("file-a", token("ya29.a", 3_600_000), 0);
    assert_eq!(cache.fresh("file-b", 0), None);
    cache.keep("file-a", token("ya29.a2", 7_200_000), 10);
    assert_eq!(cache.fresh("file-a", 10).as_deref(), Some("ya29.a2"));
    assert_eq!(cache.len(), 1, "a newer token replaces the older one");
}

#[test]
fn the_cache_is_bounded_and_drops_the_token_that_expires_first() {
    let mut cache = TokenCache::default();
    for i in 0..MAX_TOKENS as u64 {
        cache.keep(&format!("file-{i}"), token("t", 3_600_000 + i), 0);
    }
    cache.keep("file-new", token("new", 9_000_000), 0);
    assert_eq!(cache.len(), MAX_TOKENS);
    assert_eq!(cache.fresh("file-0", 0), None);
    assert_eq!(cache.fresh("file-new", 0).as_deref(), Some("new"));
    // A token already inside its last five minutes is never kept.
    cache.keep("file-short", token("short", REFRESH_BEFORE_MS), 0);
    assert_eq!(cache.fresh("file-short", 0), None);
}
