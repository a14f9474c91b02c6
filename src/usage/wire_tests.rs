use super::*;

fn counts(json: &str) -> Option<TokenCounts> {
    answer_usage(json.as_bytes()).unwrap()
}

fn t(prompt: u64, completion: u64, cached: u64) -> Option<TokenCounts> {
    Some(TokenCounts::new(prompt, completion, cached))
}

#[test]
fn openai_chat_usage_reads_prompt_completion_and_cached_tokens() {
    assert_eq!(
        counts(
            r#"{"id":"c","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":120,"completion_tokens":8,"total_tokens":128,"prompt_tokens_details":{"cached_tokens":100}}}"#
        ),
        t(120, 8, 100)
    );
    assert_eq!(
        counts(r#"{"usage":{"prompt_tokens":5,"completion_tokens":7}}"#),
        t(5, 7, 0)
    );
}

#[test]
fn embeddings_usage_has_prompt_tokens_and_no_completion() {
    assert_eq!(
        counts(
            r#"{"data":[{"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":3,"total_tokens":3}}"#
        ),
        t(3, 0, 0)
    );
}

#[test]
fn anthropic_prompt_is_input_plus_cache_reads_plus_cache_writes_and_cached_is_cache_reads() {
    assert_eq!(
        counts(
            r#"{"type":"message","usage":{"input_tokens":12,"cache_read_input_tokens":100,"cache_creation_input_tokens":30,"output_tokens":58}}"#
        ),
        t(142, 58, 100).map(|t| t.with_writes(30, 0)),
        "a write without a TTL breakdown is a 5-minute one"
    );
}

#[test]
fn anthropic_cache_writes_are_split_by_the_ttl_breakdown_of_cache_creation() {
    assert_eq!(
        counts(
            r#"{"type":"message","usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":5}}"#
        ),
        t(410, 5, 100).map(|t| t.with_writes(100, 200))
    );
    // Only the 1-hour tier named: the rest of the total is 5-minute.
    assert_eq!(
        counts(
            r#"{"usage":{"input_tokens":0,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_1h_input_tokens":120},"output_tokens":1}}"#
        ),
        t(300, 1, 0).map(|t| t.with_writes(180, 120))
    );
    // A breakdown without the total still counts its writes.
    assert_eq!(
        counts(
            r#"{"usage":{"input_tokens":1,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":50},"output_tokens":1}}"#
        ),
        t(51, 1, 0).map(|t| t.with_writes(0, 50))
    );
}

#[test]
fn a_chat_shaped_usage_reads_its_writes_as_parts_of_the_prompt() {
    assert_eq!(
        counts(
            r#"{"usage":{"prompt_tokens":410,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":100},"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200}}}"#
        ),
        t(410, 5, 100).map(|t| t.with_writes(100, 200))
    );
    // Never more writes than the uncached prompt holds.
    assert_eq!(
        counts(
            r#"{"usage":{"prompt_tokens":50,"prompt_tokens_details":{"cached_tokens":40},"cache_creation_input_tokens":300}}"#
        ),
        t(50, 0, 40).map(|t| t.with_writes(10, 0))
    );
}

#[test]
fn the_write_split_puts_all_but_the_one_hour_part_in_the_five_minute_tier() {
    assert_eq!(write_split(Some(300), 0, 0), (300, 0));
    assert_eq!(write_split(None, 0, 0), (0, 0));
    assert_eq!(write_split(Some(300), 100, 200), (100, 200));
    assert_eq!(write_split(Some(300), 0, 200), (100, 200));
    assert_eq!(write_split(None, 10, 20), (10, 20));
    assert_eq!(
        write_split(Some(5), 10, 20),
        (10, 20),
        "the larger report wins"
    );
}

#[test]
fn a_later_report_keeps_the_earlier_write_breakdown_unless_it_brings_its_own() {
    let mut a: WireUsage = serde_json::from_str(
        r#"{"input_tokens":5,"cache_creation_input_tokens":30,"cache_creation":{"ephemeral_1h_input_tokens":30},"output_tokens":1}"#,
    )
    .unwrap();
    a.merge(&serde_json::from_str(r#"{"output_tokens":7}"#).unwrap());
    assert_eq!(a.counts(), t(35, 7, 0).map(|t| t.with_writes(0, 30)));
}

#[test]
fn an_answer_without_usage_or_with_an_empty_one_has_unknown_tokens_never_zero() {
    assert_eq!(counts(r#"{"choices":[]}"#), None);
    assert_eq!(counts(r#"{"usage":null}"#), None);
    assert_eq!(counts(r#"{"usage":{}}"#), None);
}

#[test]
fn cached_tokens_never_exceed_the_prompt() {
    assert_eq!(
        counts(r#"{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":9}}}"#),
        t(5, 0, 5)
    );
}

#[test]
fn a_usage_object_of_an_unexpected_shape_makes_tokens_unknown_not_the_answer_broken() {
    assert_eq!(
        counts(r#"{"usage":{"prompt_tokens":"five"},"choices":[{}]}"#),
        None
    );
    assert_eq!(counts(r#"{"usage":[1,2]}"#), None);
    assert_eq!(counts("[1]"), None);
}

#[test]
fn a_body_that_is_not_json_is_refused_while_reading_usage() {
    assert!(answer_usage(b"<html>").is_err());
    assert!(answer_usage(br#"{"usage":{"prompt_tokens":1}"#).is_err());
}

#[test]
fn a_later_report_replaces_only_the_fields_it_carries() {
    let mut a: WireUsage =
        serde_json::from_str(r#"{"input_tokens":5,"cache_read_input_tokens":2,"output_tokens":1}"#)
            .unwrap();
    a.merge(&serde_json::from_str(r#"{"output_tokens":7}"#).unwrap());
    assert_eq!(a.counts(), t(7, 7, 2));
}
