use super::*;

/// AWS's SigV4 test suite: its credentials, region, service and time (2015-08-30T12:36:00Z).
const AKID: &str = "AKIDEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const SUITE_MS: u64 = 1_440_938_160_000;
const EMPTY_HASH: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const STS_TOKEN: &str = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";

fn suite_scope(amz_date: &str) -> Scope<'_> {
    Scope {
        access_key_id: AKID,
        secret_access_key: SECRET,
        region: "us-east-1",
        service: "service",
        amz_date,
    }
}

fn suite_signature(method: &str, query: &str, headers: &[(&str, &str)]) -> String {
    let req = Request {
        method,
        path: "/",
        query,
        headers,
        payload_hash: EMPTY_HASH,
    };
    let auth = authorization(&suite_scope("20150830T123600Z"), &req);
    auth.rsplit("Signature=").next().unwrap().to_owned()
}

const HOST: (&str, &str) = ("host", "example.amazonaws.com");
const DATE: (&str, &str) = ("x-amz-date", "20150830T123600Z");

#[test]
fn the_signing_key_is_derived_as_aws_documents_it() {
    let key = signing_key(SECRET, "20120215", "us-east-1", "iam");
    assert_eq!(
        hex::encode(key),
        "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
    );
}

#[test]
fn the_suites_get_vanilla_and_post_vanilla_signatures_are_reproduced() {
    assert_eq!(
        suite_signature("GET", "", &[HOST, DATE]),
        "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    );
    assert_eq!(
        suite_signature("POST", "", &[DATE, HOST]),
        "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
    );
}

#[test]
fn query_pairs_are_sorted_before_signing() {
    assert_eq!(
        suite_signature("GET", "Param2=value2&Param1=value1", &[HOST, DATE]),
        "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
    );
}

#[test]
fn a_session_token_is_a_signed_header_as_in_the_suites_post_sts_header_before() {
    assert_eq!(
        suite_signature(
            "POST",
            "",
            &[HOST, DATE, ("x-amz-security-token", STS_TOKEN)]
        ),
        "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
    );
}

#[test]
fn sign_reproduces_the_suites_post_x_www_form_urlencoded_request() {
    let key = BedrockKey::Sigv4 {
        access_key_id: AKID,
        secret_access_key: SECRET,
        session_token: None,
    };
    let headers = sign(
        key,
        "us-east-1",
        "service",
        "example.amazonaws.com",
        "/",
        "",
        b"Param1=value1",
        "application/x-www-form-urlencoded",
        SUITE_MS,
    );
    assert_eq!(
        headers,
        vec![
            ("x-amz-date", "20150830T123600Z".to_owned()),
            ("authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a".to_owned()),
        ]
    );
}

#[test]
fn with_a_session_token_the_token_is_sent_and_signed() {
    let key = BedrockKey::parse("ASIAX:secret:tok+en/=").unwrap();
    let headers = sign(
        key,
        "eu-west-1",
        "bedrock",
        "bedrock-runtime.eu-west-1.amazonaws.com",
        "model/m/converse",
        "",
        b"{}",
        "application/json",
        SUITE_MS,
    );
    let names: Vec<&str> = headers.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        ["x-amz-date", "x-amz-security-token", "authorization"]
    );
    assert_eq!(headers[1].1, "tok+en/=");
    assert!(headers[2].1.starts_with(
        "AWS4-HMAC-SHA256 Credential=ASIAX/20150830/eu-west-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="
    ));
    assert!(!headers[2].1.contains("secret"));
}

#[test]
fn a_bedrock_api_key_is_sent_as_a_bearer_token_unsigned() {
    let headers = sign(
        BedrockKey::ApiKey("ABSK123"),
        "us-east-1",
        "bedrock",
        "h",
        "/",
        "",
        b"",
        "application/json",
        0,
    );
    assert_eq!(
        headers,
        vec![("authorization", "Bearer ABSK123".to_owned())]
    );
}

#[test]
fn the_canonical_uri_is_the_path_as_sent_encoded_once_more_as_botocore_does() {
    // botocore: quote("/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse", safe="/~")
    let headers = [HOST, DATE];
    let req = Request {
        method: "POST",
        path: "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
        query: "",
        headers: &headers,
        payload_hash: EMPTY_HASH,
    };
    let canonical = canonical_request(&req, &headers, "host;x-amz-date");
    assert_eq!(
        canonical.lines().nth(1),
        Some("/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse")
    );
    let relative = Request {
        path: "model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
        ..req
    };
    assert_eq!(
        canonical_request(&relative, &headers, "host;x-amz-date"),
        canonical
    );
}

#[test]
fn amz_date_is_utc_civil_time_across_leap_days_and_centuries() {
    for (ms, date) in [
        (0, "19700101T000000Z"),
        (SUITE_MS + 999, "20150830T123600Z"),
        (946_684_799_000, "19991231T235959Z"),
        (951_782_400_000, "20000229T000000Z"),
        (1_709_251_199_000, "20240229T235959Z"),
        (4_107_585_600_000, "21000301T120000Z"),
    ] {
        assert_eq!(amz_date(ms), date, "{ms}");
    }
}

#[test]
fn the_region_is_read_from_a_bedrock_runtime_host() {
    assert_eq!(
        region_of("bedrock-runtime.us-east-1.amazonaws.com"),
        Some("us-east-1")
    );
    assert_eq!(
        region_of("bedrock-runtime-fips.us-gov-west-1.amazonaws.com"),
        Some("us-gov-west-1")
    );
    assert_eq!(
        region_of("bedrock-runtime.cn-north-1.amazonaws.com.cn"),
        Some("cn-north-1")
    );
    assert_eq!(region_of("example.com"), None);
    assert_eq!(region_of("bedrock-runtime"), None);
}

#[test]
fn a_converse_request_is_signed_exactly_as_botocore_signs_it() {
    // Reference signatures from botocore's SigV4Auth (service bedrock, 2024-01-01T00:00:00Z) for
    // this body, path and host, with and without a session token.
    let body = br#"{"messages":[{"role":"user","content":[{"text":"Hi"}]}],"inferenceConfig":{"maxTokens":10}}"#;
    let path = format!(
        "/{}",
        crate::providers::bedrock::path("anthropic.claude-3-5-sonnet-20240620-v1:0", false)
    );
    for (secret, signature) in [
        (
            format!("{AKID}:{SECRET}"),
            "228e7d02caa92b60e4a519d7c6eb86f318d258ae95f5036cc62d4f109a78a058",
        ),
        (
            format!("{AKID}:{SECRET}:FwoGZXIvYXdzEXAMPLETOKEN+/="),
            "7e308e49d1e2415358a728e2b5dcf2368768b4b3a92763207fe20331c311ae9b",
        ),
    ] {
        let headers = sign(
            BedrockKey::parse(&secret).unwrap(),
            "us-east-1",
            "bedrock",
            "bedrock-runtime.us-east-1.amazonaws.com",
            &path,
            "",
            body,
            "application/json",
            1_704_067_200_000,
        );
        let auth = &headers.last().unwrap().1;
        assert!(auth.ends_with(&format!("Signature={signature}")), "{auth}");
    }
}
