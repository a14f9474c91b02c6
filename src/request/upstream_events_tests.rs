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
