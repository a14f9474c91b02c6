use super::*;
use crate::config::provider::test_provider as provider;

fn azure() -> Provider {
    provider(
        r#"{"kind":"azure_openai","base_url":"https://r.openai.azure.com","api_version":"2024-10-21","keys":["k0123456789abcdef"]}"#,
    )
}

fn answer<'a>(
    status: u16,
    retry_after: Option<&'a str>,
    headers: &'a [(String, String)],
) -> StatusAnswer<'a> {
    StatusAnswer {
        status,
        retry_after,
        headers,
        text: "",
    }
}

const MAX: u64 = 300_000;

#[test]
fn azures_retry_after_ms_wins_over_retry_after() {
    let headers = vec![("retry-after-ms".to_owned(), "1500".to_owned())];
    let (verdict, park) = read_status(&azure(), &answer(429, Some("20"), &headers), 0, MAX);
    assert_eq!(verdict, StatusClass::NextKey(Failure::RateLimit));
    assert_eq!(park, Some(1_500));
    let (_, park) = read_status(&azure(), &answer(429, Some("20"), &[]), 0, MAX);
    assert_eq!(park, Some(20_000), "without it, Retry-After parks");
}

#[test]
fn a_cloud_throttle_without_a_hint_parks_its_key_for_ten_seconds() {
    let (_, park) = read_status(&azure(), &answer(429, None, &[]), 0, MAX);
    assert_eq!(park, Some(CLOUD_THROTTLE_PARK_MS));
    assert_eq!(
        read_status(&azure(), &answer(429, None, &[]), 0, 4_000).1,
        Some(4_000)
    );
}

#[test]
fn openai_keeps_the_specs_rule_a_429_without_retry_after_parks_nothing() {
    let openai = provider(
        r#"{"kind":"openai","base_url":"https://api.openai.com/v1","keys":["k0123456789abcdef"]}"#,
    );
    let headers = vec![("retry-after-ms".to_owned(), "1500".to_owned())];
    let (verdict, park) = read_status(&openai, &answer(429, None, &headers), 0, MAX);
    assert_eq!(verdict, StatusClass::NextKey(Failure::RateLimit));
    assert_eq!(park, None);
}

#[test]
fn bedrock_errors_are_read_by_their_type_never_their_status() {
    let bedrock = provider(
        r#"{"kind":"bedrock","base_url":"https://bedrock-runtime.us-east-1.amazonaws.com","region":"us-east-1","keys":["AKID:secretsecret"]}"#,
    );
    let quota = vec![(
        "x-amzn-errortype".to_owned(),
        "ServiceQuotaExceededException:http://internal.amazon.com/coral/".to_owned(),
    )];
    let (verdict, park) = read_status(&bedrock, &answer(400, None, &quota), 0, MAX);
    assert_eq!(verdict, StatusClass::NextKey(Failure::RateLimit));
    assert_eq!(park, Some(CLOUD_THROTTLE_PARK_MS), "no hint: ten seconds");
    let not_ready = StatusAnswer {
        text: r#"{"__type":"ModelNotReadyException","message":"warming"}"#,
        ..answer(429, None, &[])
    };
    let (verdict, park) = read_status(&bedrock, &not_ready, 0, MAX);
    assert_eq!(verdict, StatusClass::NextCandidate(Failure::Server));
    assert_eq!(park, None);
}

#[test]
fn a_gemini_429_parks_for_its_retry_delay() {
    let gemini = provider(
        r#"{"kind":"gemini","base_url":"https://generativelanguage.googleapis.com/v1beta","keys":["AIzaExample000000"]}"#,
    );
    let exhausted = StatusAnswer {
        text: r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}"#,
        ..answer(429, None, &[])
    };
    assert_eq!(
        read_status(&gemini, &exhausted, 0, MAX),
        (StatusClass::NextKey(Failure::RateLimit), Some(7_000))
    );
    let bad_key = StatusAnswer {
        text: r#"{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"API key not valid","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}"#,
        ..answer(400, None, &[])
    };
    assert_eq!(
        read_status(&gemini, &bad_key, 0, MAX).0,
        StatusClass::NextKey(Failure::Auth)
    );
}

#[test]
fn rate_limit_cooldown_ms_replaces_the_cloud_throttle_park_for_a_hintless_429() {
    let mut p = azure();
    p.resilience.rate_limit_cooldown_ms = Some(45_000);
    assert_eq!(
        read_status(&p, &answer(429, None, &[]), 0, MAX).1,
        Some(45_000)
    );
    let headers = vec![("retry-after-ms".to_owned(), "1500".to_owned())];
    assert_eq!(
        read_status(&p, &answer(429, None, &headers), 0, MAX).1,
        Some(1_500),
        "a hint the gateway reads still wins"
    );
    assert_eq!(read_status(&p, &answer(503, None, &[]), 0, MAX).1, None);
}
