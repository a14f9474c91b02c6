use super::*;
use crate::config::admin_body::{parse_body, ProviderBody};
use crate::config::ProviderName;

fn provider(body: &str) -> Provider {
    let b: ProviderBody = parse_body(body.as_bytes()).unwrap();
    b.validate(ProviderName::parse("p").unwrap())
        .unwrap()
        .resolve(|_| None)
        .unwrap()
}

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
