use super::*;
use crate::usage::StreamUsage;

const MESSAGES: &str = concat!(
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"hello there\"}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

fn native() -> UpstreamEvents {
    UpstreamEvents::new(
        StreamDecoder::AnthropicNative(Box::default()),
        Relay::metering(StreamUsage::messages()),
    )
}

#[test]
fn a_part_read_event_moved_out_and_back_loses_no_byte() {
    let delta = MESSAGES.split_inclusive("\n\n").nth(1).unwrap();
    let (head, tail) = delta.split_at(20);
    let mut relayed = native();
    relayed.on_chunk(head.as_bytes().to_vec());
    let held = relayed.take_pending();
    assert_eq!(held, head.as_bytes(), "the decoder's part-read event");
    relayed.read_passed(held);
    let RelayStep::Forward(out) = relayed.on_chunk(tail.as_bytes().to_vec()) else {
        panic!("the event goes on");
    };
    assert_eq!(out, delta.as_bytes());
}

#[test]
fn plain_events_passed_by_the_runtime_meter_as_the_relayed_ones_do() {
    let mut events = MESSAGES.split_inclusive("\n\n");
    let (start, delta) = (events.next().unwrap(), events.next().unwrap());
    let mut relayed = native();
    relayed.on_chunk(format!("{start}{delta}").into_bytes());
    let mut passed = native();
    passed.on_chunk(start.as_bytes().to_vec());
    passed.read_passed(delta.as_bytes().to_vec());
    assert!(
        passed.needs_passed(false),
        "no message_delta yet: an estimate may need them"
    );
    assert!(passed.plain_middle(true, false).is_some());
    assert!(
        passed.plain_middle(false, false).is_none(),
        "a caller of another shape"
    );
    assert_eq!(
        passed.relay().usage().final_tokens(0),
        relayed.relay().usage().final_tokens(0)
    );
}

const GEMINI: &str = concat!(
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hi\"}]}}],\"responseId\":\"r1\"}\r\n\r\n",
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\" there\"}]},\"finishReason\":\"STOP\"}],",
    "\"usageMetadata\":{\"promptTokenCount\":4,\"candidatesTokenCount\":2},\"responseId\":\"r1\"}\r\n\r\n",
);

fn gemini() -> UpstreamEvents {
    UpstreamEvents::new(
        StreamDecoder::new(Dialect::Gemini, "gemini-x", 1),
        Relay::metering(StreamUsage::chat(true)),
    )
}

#[test]
fn a_gemini_stream_that_finished_completes_on_the_bodys_close_with_its_usage() {
    let mut events = gemini();
    let RelayStep::Forward(_) = events.on_chunk(GEMINI.as_bytes().to_vec()) else {
        panic!("no [DONE] before the body closes");
    };
    let RelayStep::Finish { bytes, end } = events.on_end() else {
        panic!("the close ends the stream");
    };
    assert_eq!(end, crate::stream::StreamEnd::Completed);
    assert!(String::from_utf8_lossy(&bytes).ends_with("data: [DONE]\n\n"));
    assert_eq!(
        events.tokens().map(|t| (t.prompt, t.completion)),
        Some((4, 2))
    );
}

#[test]
fn a_gemini_stream_cut_before_its_finish_reason_is_cut() {
    let mut events = gemini();
    let first = GEMINI.split_inclusive("\r\n\r\n").next().unwrap();
    events.on_chunk(first.as_bytes().to_vec());
    let RelayStep::Finish { end, .. } = events.on_end() else {
        panic!("the close ends the stream");
    };
    assert!(matches!(end, crate::stream::StreamEnd::Failed(_)));
}

#[test]
fn an_error_event_before_the_first_byte_reads_as_the_answer_it_stands_for() {
    let bedrock = format!(
        "{ERROR_EVENT_DETAIL}{}",
        r#"{"error":{"type":"ThrottlingException","message":"slow down"}}"#
    );
    let (status, headers, _) = early_error(Dialect::Bedrock, &bedrock).unwrap();
    assert_eq!(
        status, 500,
        "an unknown type would read as a server failure"
    );
    assert_eq!(
        headers,
        [(
            "x-amzn-errortype".to_owned(),
            "ThrottlingException".to_owned()
        )]
    );
    let google = format!(
        "{ERROR_EVENT_DETAIL}{}",
        r#"{"error":{"type":"RESOURCE_EXHAUSTED","code":429,"message":"quota"}}"#
    );
    let (status, _, text) = early_error(Dialect::Gemini, &google).unwrap();
    assert_eq!(status, 429);
    assert!(text.contains("RESOURCE_EXHAUSTED"));
    assert_eq!(early_error(Dialect::Anthropic, &google), None);
    assert_eq!(
        early_error(Dialect::Bedrock, "stream ended without [DONE]"),
        None
    );
}
